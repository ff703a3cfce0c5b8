"""The API's cluster endpoints: health, brokers, topics, partitions."""
