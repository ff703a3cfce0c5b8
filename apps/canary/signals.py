"""The signals the canary app sends, so that notifications (and the dashboard) follow
what clients feel without the canary knowing about them.

Sent inside the transaction that records the change; a receiver must not raise.
"""

from django.dispatch import Signal

# A broker's canary latency left its band (outside=True) or came back into it.
# kwargs: cluster, broker_id, outside, p99_ms (None: nothing acknowledged), top_ms,
# baseline_ms, at.
canary_band_changed = Signal()
