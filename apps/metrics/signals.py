"""The signals the metrics app sends, so that other apps (plans) can react to new
loads without the metrics app knowing about them.

Sent with `send_robust` inside the transaction that stores the loads: a receiver's
error is logged by Django and never fails the run, and a receiver that enqueues
work defers it with `transaction.on_commit`, so the work sees the stored rows.
"""

from django.dispatch import Signal

# An aggregation run stored windows. Sender: the Cluster class. Arguments: cluster
# (Cluster), window_start (datetime: start of the newest window stored).
loads_stored = Signal()
