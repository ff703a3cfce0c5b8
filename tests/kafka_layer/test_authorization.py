"""Kafka's authorization failures said as the ACL the principal lacks."""

from confluent_kafka import KafkaError, KafkaException
from kafka.errors import ClusterAuthorizationFailedError

from apps.kafka_layer.authorization import (
    authorization_denied,
    cluster_acl_gaps_text,
    kafka_error_text,
)


def test_it_names_the_acl_for_a_librdkafka_denial():
    error = KafkaException(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))

    text = kafka_error_text(api="IncrementalAlterConfigs(topic)", error=error, resource="orders")

    assert text.startswith("not authorized: the principal needs AlterConfigs on Topic 'orders'")
    assert "(IncrementalAlterConfigs)" in text


def test_it_names_the_acl_for_a_kafka_python_denial_without_the_request_dump():
    error = ClusterAuthorizationFailedError(
        "Request 'AlterPartitionReassignmentsRequest(...)' failed with response '...'"
    )

    text = kafka_error_text(api="AlterPartitionReassignments", error=error)

    assert "needs Alter on Cluster 'kafka-cluster' (AlterPartitionReassignments)" in text
    assert "Request" not in text


def test_it_keeps_other_errors_as_kafka_said_them_without_the_request_dump():
    error = ValueError("[Error 7] RequestTimedOutError: Request 'X(a=1)' failed with response 'Y'")

    text = kafka_error_text(api="ListPartitionReassignments", error=error)

    assert not authorization_denied(error)
    assert text == (
        "ListPartitionReassignments failed: ValueError [Error 7] RequestTimedOutError: "
        "request failed"
    )


def test_it_lists_the_cluster_operations_a_principal_lacks():
    text = cluster_acl_gaps_text(authorized={"DESCRIBE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"})

    assert text.startswith("the principal lacks Alter on Cluster 'kafka-cluster', needed to move")
    assert cluster_acl_gaps_text(authorized={"ALL"}) == ""
    assert (
        cluster_acl_gaps_text(authorized={"DESCRIBE", "ALTER", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"})
        == ""
    )
