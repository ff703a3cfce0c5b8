"""The signals the clusters app sends, so that other apps (the dashboard's live pages)
can follow the cluster model without the clusters app knowing about them.

Sent with `send_robust` right after a sync round is written: a receiver's error is
logged by Django and never fails a sync, and a receiver that talks to the outside
world defers it with `transaction.on_commit`.
"""

from django.dispatch import Signal

# A sync round read the live cluster and wrote (or re-confirmed) its model.
# Sender: the Cluster class. Argument: cluster (Cluster).
cluster_synced = Signal()
