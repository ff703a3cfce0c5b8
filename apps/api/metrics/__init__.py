"""The API's load endpoints: heatmap, traffic, broker loads, partition loads."""
