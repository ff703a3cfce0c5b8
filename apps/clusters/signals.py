"""Domain signals of the clusters app: state changes the sync service observed.

Sent inside the sync's transaction, so a receiver's writes commit (or roll back)
with the change itself; a receiver must not raise.
"""

from django.dispatch import Signal

# A known broker stopped or started answering. kwargs: cluster, node_id, alive, at.
broker_state_changed = Signal()

# A sync round failed after a good one (reachable=False, error=why), or succeeded
# after a failed one (reachable=True, error=""). kwargs: cluster, reachable, error, at.
cluster_reachability_changed = Signal()
