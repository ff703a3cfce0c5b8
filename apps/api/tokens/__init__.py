"""The API's token endpoints."""
