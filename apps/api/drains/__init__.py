"""The API's drained-broker endpoints."""
