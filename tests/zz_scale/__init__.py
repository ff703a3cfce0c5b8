"""Tests at scale on the real dev cluster (10,000+ partitions).

The directory sorts last on purpose: pytest collects tests/ in name order, so these run
after every other test of a session, and whatever a 10k-partition cluster leaves behind
for a while (brokers busy deleting logs, a larger heap) cannot slow or break the others.
"""
