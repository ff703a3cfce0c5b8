"""What the operator's monitoring reads: liveness and readiness endpoints, a status page
of every dependency, and Prometheus metrics computed from the database at scrape time
(so every web process answers the same, however many there are)."""
