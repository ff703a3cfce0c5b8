"""The one layer that talks to Kafka: confluent-kafka for all it has, kafka-python for
AlterPartitionReassignments, ListPartitionReassignments and DescribeLogDirs (behind
`kafka_python_adapter`). No module outside this package imports either client
(an import-linter contract); callers pass `connection.ConnectionSettings` and read
plain Python values back. Not a Django app: it has no models, and reads only the
client settings (timeouts) from django.conf.
"""
