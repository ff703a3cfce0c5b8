"""The API's plan endpoints: reading plans, requesting one, deciding on one."""
