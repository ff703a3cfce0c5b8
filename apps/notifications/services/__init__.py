"""Notification services, one concern per module (import them from the module):

- `channels`: create, change, delete a channel (audited) and send it a test event;
- `dispatch`: turn an event into deliveries and queue them after commit;
- `deliveries`: one delivery attempt, its log row, and the retry decision.
"""
