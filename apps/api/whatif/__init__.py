"""The API's what-if endpoint."""
