"""The signals the clusters app sends, so that other apps (the dashboard's live pages,
notifications) can follow the cluster model without the clusters app knowing about them.

- `cluster_synced` is sent with `send_robust` right after a sync round is written: a
  receiver's error is logged by Django and never fails a sync, and a receiver that talks
  to the outside world defers it with `transaction.on_commit`.
- the state-change signals are sent inside the sync's transaction, so a receiver's writes
  commit (or roll back) with the change itself; a receiver must not raise.
"""

from django.dispatch import Signal

# A sync round read the live cluster and wrote (or re-confirmed) its model.
# Sender: the Cluster class. Argument: cluster (Cluster).
cluster_synced = Signal()

# A known broker stopped or started answering. kwargs: cluster, node_id, alive, at.
broker_state_changed = Signal()

# A sync round failed after a good one (reachable=False, error=why), or succeeded
# after a failed one (reachable=True, error=""). kwargs: cluster, reachable, error, at.
cluster_reachability_changed = Signal()

# cluster_delete is about to remove a cluster. kwargs: cluster. A receiver vetoes by
# raising apps.clusters.editing.ClusterRemovalRefused (e.g. a plan is moving data on it);
# nothing is removed then.
cluster_removing = Signal()
