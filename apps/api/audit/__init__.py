"""The API's audit trail endpoint."""
