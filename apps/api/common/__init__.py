"""What every API domain package shares: the request checks, the error body."""
