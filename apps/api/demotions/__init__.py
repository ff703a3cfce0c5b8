"""The API's demoted-broker endpoints."""
