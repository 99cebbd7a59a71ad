import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FeedbackState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FEEDBACK_STATE_UNSPECIFIED: _ClassVar[FeedbackState]
    FEEDBACK_STATE_NONE: _ClassVar[FeedbackState]
    FEEDBACK_STATE_APPLIED: _ClassVar[FeedbackState]
    FEEDBACK_STATE_DEFERRED: _ClassVar[FeedbackState]
    FEEDBACK_STATE_REFUSED: _ClassVar[FeedbackState]
    FEEDBACK_STATE_IMPORTED: _ClassVar[FeedbackState]

class JobStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    JOB_STATUS_UNSPECIFIED: _ClassVar[JobStatus]
    JOB_STATUS_RUNNING: _ClassVar[JobStatus]
    JOB_STATUS_COMPLETED: _ClassVar[JobStatus]
    JOB_STATUS_FAILED: _ClassVar[JobStatus]

class NodeState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NODE_STATE_UNSPECIFIED: _ClassVar[NodeState]
    NODE_STATE_PENDING: _ClassVar[NodeState]
    NODE_STATE_RUNNING: _ClassVar[NodeState]
    NODE_STATE_OK: _ClassVar[NodeState]
    NODE_STATE_FAILED: _ClassVar[NodeState]
    NODE_STATE_RETRYABLE: _ClassVar[NodeState]
FEEDBACK_STATE_UNSPECIFIED: FeedbackState
FEEDBACK_STATE_NONE: FeedbackState
FEEDBACK_STATE_APPLIED: FeedbackState
FEEDBACK_STATE_DEFERRED: FeedbackState
FEEDBACK_STATE_REFUSED: FeedbackState
FEEDBACK_STATE_IMPORTED: FeedbackState
JOB_STATUS_UNSPECIFIED: JobStatus
JOB_STATUS_RUNNING: JobStatus
JOB_STATUS_COMPLETED: JobStatus
JOB_STATUS_FAILED: JobStatus
NODE_STATE_UNSPECIFIED: NodeState
NODE_STATE_PENDING: NodeState
NODE_STATE_RUNNING: NodeState
NODE_STATE_OK: NodeState
NODE_STATE_FAILED: NodeState
NODE_STATE_RETRYABLE: NodeState

class QuerySource(_message.Message):
    __slots__ = ("id", "task", "content")
    ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    task: str
    content: str
    def __init__(self, id: _Optional[str] = ..., task: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class QueryEvent(_message.Message):
    __slots__ = ("sequence", "goal_id", "query", "response", "source_ids", "sources")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOAL_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    goal_id: str
    query: str
    response: str
    source_ids: _containers.RepeatedScalarFieldContainer[str]
    sources: _containers.RepeatedCompositeFieldContainer[QuerySource]
    def __init__(self, sequence: _Optional[int] = ..., goal_id: _Optional[str] = ..., query: _Optional[str] = ..., response: _Optional[str] = ..., source_ids: _Optional[_Iterable[str]] = ..., sources: _Optional[_Iterable[_Union[QuerySource, _Mapping]]] = ...) -> None: ...

class EvalResult(_message.Message):
    __slots__ = ("status", "reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    status: str
    reason: str
    def __init__(self, status: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class EvaluationEvent(_message.Message):
    __slots__ = ("query_sequence", "knowledge_id", "eval_result", "evaluated_at_trigger")
    QUERY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    EVAL_RESULT_FIELD_NUMBER: _ClassVar[int]
    EVALUATED_AT_TRIGGER_FIELD_NUMBER: _ClassVar[int]
    query_sequence: int
    knowledge_id: str
    eval_result: EvalResult
    evaluated_at_trigger: str
    def __init__(self, query_sequence: _Optional[int] = ..., knowledge_id: _Optional[str] = ..., eval_result: _Optional[_Union[EvalResult, _Mapping]] = ..., evaluated_at_trigger: _Optional[str] = ...) -> None: ...

class FeedbackRefusedEvent(_message.Message):
    __slots__ = ("query_sequence", "knowledge_id", "status", "code", "message")
    QUERY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    query_sequence: int
    knowledge_id: str
    status: str
    code: str
    message: str
    def __init__(self, query_sequence: _Optional[int] = ..., knowledge_id: _Optional[str] = ..., status: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class EvaluationFailedEvent(_message.Message):
    __slots__ = ("query_sequences", "reason", "answer_excerpt", "trigger_id", "deliveries", "gave_up")
    QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ANSWER_EXCERPT_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_ID_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    GAVE_UP_FIELD_NUMBER: _ClassVar[int]
    query_sequences: _containers.RepeatedScalarFieldContainer[int]
    reason: str
    answer_excerpt: str
    trigger_id: str
    deliveries: int
    gave_up: bool
    def __init__(self, query_sequences: _Optional[_Iterable[int]] = ..., reason: _Optional[str] = ..., answer_excerpt: _Optional[str] = ..., trigger_id: _Optional[str] = ..., deliveries: _Optional[int] = ..., gave_up: _Optional[bool] = ...) -> None: ...

class ExtractionPayload(_message.Message):
    __slots__ = ("task", "content", "types", "tags", "score", "scopes", "owner", "resource_ids", "source_name", "source_category", "urls", "agent_id", "submitted_by", "message_id")
    class TagsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TASK_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_IDS_FIELD_NUMBER: _ClassVar[int]
    SOURCE_NAME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_CATEGORY_FIELD_NUMBER: _ClassVar[int]
    URLS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBMITTED_BY_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    task: str
    content: str
    types: _containers.RepeatedScalarFieldContainer[str]
    tags: _containers.ScalarMap[str, str]
    score: int
    scopes: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    resource_ids: _containers.RepeatedScalarFieldContainer[str]
    source_name: str
    source_category: str
    urls: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    submitted_by: str
    message_id: str
    def __init__(self, task: _Optional[str] = ..., content: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., tags: _Optional[_Mapping[str, str]] = ..., score: _Optional[int] = ..., scopes: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ..., resource_ids: _Optional[_Iterable[str]] = ..., source_name: _Optional[str] = ..., source_category: _Optional[str] = ..., urls: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ..., submitted_by: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class ExtractionPendingEvent(_message.Message):
    __slots__ = ("extraction_id", "sequence", "goal_id", "branch_id", "payload")
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOAL_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    extraction_id: str
    sequence: int
    goal_id: str
    branch_id: str
    payload: ExtractionPayload
    def __init__(self, extraction_id: _Optional[str] = ..., sequence: _Optional[int] = ..., goal_id: _Optional[str] = ..., branch_id: _Optional[str] = ..., payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ...) -> None: ...

class ExtractionReviewedEvent(_message.Message):
    __slots__ = ("extraction_id", "decision", "edited_payload")
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EDITED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    extraction_id: str
    decision: str
    edited_payload: ExtractionPayload
    def __init__(self, extraction_id: _Optional[str] = ..., decision: _Optional[str] = ..., edited_payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ...) -> None: ...

class ExtractionCommittedEvent(_message.Message):
    __slots__ = ("extraction_id", "knowledge_id")
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    extraction_id: str
    knowledge_id: str
    def __init__(self, extraction_id: _Optional[str] = ..., knowledge_id: _Optional[str] = ...) -> None: ...

class ReflectionEvent(_message.Message):
    __slots__ = ("sequence_range", "summary", "consumed_at")
    SEQUENCE_RANGE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    CONSUMED_AT_FIELD_NUMBER: _ClassVar[int]
    sequence_range: _containers.RepeatedScalarFieldContainer[int]
    summary: str
    consumed_at: _timestamp_pb2.Timestamp
    def __init__(self, sequence_range: _Optional[_Iterable[int]] = ..., summary: _Optional[str] = ..., consumed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class MemoryEvent(_message.Message):
    __slots__ = ("memory_type", "key_or_scope", "summary", "step_index", "job_id", "node_id")
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    KEY_OR_SCOPE_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    memory_type: str
    key_or_scope: str
    summary: str
    step_index: int
    job_id: str
    node_id: str
    def __init__(self, memory_type: _Optional[str] = ..., key_or_scope: _Optional[str] = ..., summary: _Optional[str] = ..., step_index: _Optional[int] = ..., job_id: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class PlanEvolutionEvent(_message.Message):
    __slots__ = ("plan_version", "diff_summary", "job_id")
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    DIFF_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    plan_version: int
    diff_summary: str
    job_id: str
    def __init__(self, plan_version: _Optional[int] = ..., diff_summary: _Optional[str] = ..., job_id: _Optional[str] = ...) -> None: ...

class TaskNode(_message.Message):
    __slots__ = ("id", "type", "tool_name", "workflow", "description")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    tool_name: str
    workflow: str
    description: str
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., tool_name: _Optional[str] = ..., workflow: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class TaskEdge(_message.Message):
    __slots__ = ("from_node", "to_node")
    FROM_NODE_FIELD_NUMBER: _ClassVar[int]
    TO_NODE_FIELD_NUMBER: _ClassVar[int]
    from_node: str
    to_node: str
    def __init__(self, from_node: _Optional[str] = ..., to_node: _Optional[str] = ...) -> None: ...

class TaskGraph(_message.Message):
    __slots__ = ("nodes", "edges")
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[TaskNode]
    edges: _containers.RepeatedCompositeFieldContainer[TaskEdge]
    def __init__(self, nodes: _Optional[_Iterable[_Union[TaskNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[TaskEdge, _Mapping]]] = ...) -> None: ...

class NodeStartedEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "attempt", "worker_id")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    attempt: int
    worker_id: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., attempt: _Optional[int] = ..., worker_id: _Optional[str] = ...) -> None: ...

class NodeFinishedEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "state", "attempt", "duration_ms", "reason")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    state: str
    attempt: int
    duration_ms: int
    reason: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., state: _Optional[str] = ..., attempt: _Optional[int] = ..., duration_ms: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class AgentThoughtEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "content", "role")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    content: str
    role: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., content: _Optional[str] = ..., role: _Optional[str] = ...) -> None: ...

class DecisionMadeEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "content", "kind")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    content: str
    kind: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., content: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class ToolSelectedEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "tool_name", "reason", "input_summary")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    INPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    tool_name: str
    reason: str
    input_summary: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., tool_name: _Optional[str] = ..., reason: _Optional[str] = ..., input_summary: _Optional[str] = ...) -> None: ...

class ToolResultEvent(_message.Message):
    __slots__ = ("job_id", "node_id", "step_index", "tool_name", "summary", "error", "idempotent", "rollback_available", "external_id")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    node_id: str
    step_index: int
    tool_name: str
    summary: str
    error: str
    idempotent: bool
    rollback_available: bool
    external_id: str
    def __init__(self, job_id: _Optional[str] = ..., node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., tool_name: _Optional[str] = ..., summary: _Optional[str] = ..., error: _Optional[str] = ..., idempotent: _Optional[bool] = ..., rollback_available: _Optional[bool] = ..., external_id: _Optional[str] = ...) -> None: ...

class PlanGeneratedEvent(_message.Message):
    __slots__ = ("job_id", "plan_version", "goal", "task_graph")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    TASK_GRAPH_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    plan_version: int
    goal: str
    task_graph: TaskGraph
    def __init__(self, job_id: _Optional[str] = ..., plan_version: _Optional[int] = ..., goal: _Optional[str] = ..., task_graph: _Optional[_Union[TaskGraph, _Mapping]] = ...) -> None: ...

class DecisionSnapshotEvent(_message.Message):
    __slots__ = ("job_id", "plan_version", "goal", "task_graph", "task_graph_summary", "reasoning_summary", "memory_summary", "memory_keys", "plan_hash")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    TASK_GRAPH_FIELD_NUMBER: _ClassVar[int]
    TASK_GRAPH_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    REASONING_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_KEYS_FIELD_NUMBER: _ClassVar[int]
    PLAN_HASH_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    plan_version: int
    goal: str
    task_graph: TaskGraph
    task_graph_summary: str
    reasoning_summary: str
    memory_summary: str
    memory_keys: _containers.RepeatedScalarFieldContainer[str]
    plan_hash: str
    def __init__(self, job_id: _Optional[str] = ..., plan_version: _Optional[int] = ..., goal: _Optional[str] = ..., task_graph: _Optional[_Union[TaskGraph, _Mapping]] = ..., task_graph_summary: _Optional[str] = ..., reasoning_summary: _Optional[str] = ..., memory_summary: _Optional[str] = ..., memory_keys: _Optional[_Iterable[str]] = ..., plan_hash: _Optional[str] = ...) -> None: ...

class MessageEvent(_message.Message):
    __slots__ = ("sequence", "role", "content")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    role: str
    content: str
    def __init__(self, sequence: _Optional[int] = ..., role: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("event_id", "timestamp", "query", "evaluation", "extraction_pending", "extraction_reviewed", "extraction_committed", "reflection", "memory_read", "memory_write", "plan_evolution", "message", "node_started", "node_finished", "agent_thought_recorded", "decision_made", "tool_selected", "tool_result_summarized", "plan_generated", "decision_snapshot", "feedback_refused", "evaluation_failed")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_PENDING_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_REVIEWED_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_COMMITTED_FIELD_NUMBER: _ClassVar[int]
    REFLECTION_FIELD_NUMBER: _ClassVar[int]
    MEMORY_READ_FIELD_NUMBER: _ClassVar[int]
    MEMORY_WRITE_FIELD_NUMBER: _ClassVar[int]
    PLAN_EVOLUTION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    NODE_STARTED_FIELD_NUMBER: _ClassVar[int]
    NODE_FINISHED_FIELD_NUMBER: _ClassVar[int]
    AGENT_THOUGHT_RECORDED_FIELD_NUMBER: _ClassVar[int]
    DECISION_MADE_FIELD_NUMBER: _ClassVar[int]
    TOOL_SELECTED_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_SUMMARIZED_FIELD_NUMBER: _ClassVar[int]
    PLAN_GENERATED_FIELD_NUMBER: _ClassVar[int]
    DECISION_SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_REFUSED_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_FAILED_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    timestamp: _timestamp_pb2.Timestamp
    query: QueryEvent
    evaluation: EvaluationEvent
    extraction_pending: ExtractionPendingEvent
    extraction_reviewed: ExtractionReviewedEvent
    extraction_committed: ExtractionCommittedEvent
    reflection: ReflectionEvent
    memory_read: MemoryEvent
    memory_write: MemoryEvent
    plan_evolution: PlanEvolutionEvent
    message: MessageEvent
    node_started: NodeStartedEvent
    node_finished: NodeFinishedEvent
    agent_thought_recorded: AgentThoughtEvent
    decision_made: DecisionMadeEvent
    tool_selected: ToolSelectedEvent
    tool_result_summarized: ToolResultEvent
    plan_generated: PlanGeneratedEvent
    decision_snapshot: DecisionSnapshotEvent
    feedback_refused: FeedbackRefusedEvent
    evaluation_failed: EvaluationFailedEvent
    def __init__(self, event_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., query: _Optional[_Union[QueryEvent, _Mapping]] = ..., evaluation: _Optional[_Union[EvaluationEvent, _Mapping]] = ..., extraction_pending: _Optional[_Union[ExtractionPendingEvent, _Mapping]] = ..., extraction_reviewed: _Optional[_Union[ExtractionReviewedEvent, _Mapping]] = ..., extraction_committed: _Optional[_Union[ExtractionCommittedEvent, _Mapping]] = ..., reflection: _Optional[_Union[ReflectionEvent, _Mapping]] = ..., memory_read: _Optional[_Union[MemoryEvent, _Mapping]] = ..., memory_write: _Optional[_Union[MemoryEvent, _Mapping]] = ..., plan_evolution: _Optional[_Union[PlanEvolutionEvent, _Mapping]] = ..., message: _Optional[_Union[MessageEvent, _Mapping]] = ..., node_started: _Optional[_Union[NodeStartedEvent, _Mapping]] = ..., node_finished: _Optional[_Union[NodeFinishedEvent, _Mapping]] = ..., agent_thought_recorded: _Optional[_Union[AgentThoughtEvent, _Mapping]] = ..., decision_made: _Optional[_Union[DecisionMadeEvent, _Mapping]] = ..., tool_selected: _Optional[_Union[ToolSelectedEvent, _Mapping]] = ..., tool_result_summarized: _Optional[_Union[ToolResultEvent, _Mapping]] = ..., plan_generated: _Optional[_Union[PlanGeneratedEvent, _Mapping]] = ..., decision_snapshot: _Optional[_Union[DecisionSnapshotEvent, _Mapping]] = ..., feedback_refused: _Optional[_Union[FeedbackRefusedEvent, _Mapping]] = ..., evaluation_failed: _Optional[_Union[EvaluationFailedEvent, _Mapping]] = ...) -> None: ...

class Trace(_message.Message):
    __slots__ = ("trace_id", "owner", "agent_id", "task", "last_sequence", "reflected_at_sequence", "auto_commit", "event_count", "pending_evaluations", "unconsumed_reflections", "last_trigger", "created_at", "updated_at", "abandoned_evaluations")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    REFLECTED_AT_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    AUTO_COMMIT_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    PENDING_EVALUATIONS_FIELD_NUMBER: _ClassVar[int]
    UNCONSUMED_REFLECTIONS_FIELD_NUMBER: _ClassVar[int]
    LAST_TRIGGER_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_EVALUATIONS_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    agent_id: str
    task: str
    last_sequence: int
    reflected_at_sequence: int
    auto_commit: bool
    event_count: int
    pending_evaluations: int
    unconsumed_reflections: int
    last_trigger: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    abandoned_evaluations: int
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ..., agent_id: _Optional[str] = ..., task: _Optional[str] = ..., last_sequence: _Optional[int] = ..., reflected_at_sequence: _Optional[int] = ..., auto_commit: _Optional[bool] = ..., event_count: _Optional[int] = ..., pending_evaluations: _Optional[int] = ..., unconsumed_reflections: _Optional[int] = ..., last_trigger: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., abandoned_evaluations: _Optional[int] = ...) -> None: ...

class AppendEventsRequest(_message.Message):
    __slots__ = ("trace_id", "events", "request_id", "task", "agent_id", "auto_commit", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    AUTO_COMMIT_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    events: _containers.RepeatedCompositeFieldContainer[Event]
    request_id: str
    task: str
    agent_id: str
    auto_commit: bool
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., request_id: _Optional[str] = ..., task: _Optional[str] = ..., agent_id: _Optional[str] = ..., auto_commit: _Optional[bool] = ..., owner: _Optional[str] = ...) -> None: ...

class AppendEventsResponse(_message.Message):
    __slots__ = ("event_ids", "trace")
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    trace: Trace
    def __init__(self, event_ids: _Optional[_Iterable[str]] = ..., trace: _Optional[_Union[Trace, _Mapping]] = ...) -> None: ...

class GetLogRequest(_message.Message):
    __slots__ = ("trace_id", "types", "since", "page_size", "page_token", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TYPES_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    types: _containers.RepeatedScalarFieldContainer[str]
    since: _timestamp_pb2.Timestamp
    page_size: int
    page_token: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., types: _Optional[_Iterable[str]] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class GetLogResponse(_message.Message):
    __slots__ = ("events", "next_page_token", "trace")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TRACE_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    next_page_token: str
    trace: Trace
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., trace: _Optional[_Union[Trace, _Mapping]] = ...) -> None: ...

class ListTracesRequest(_message.Message):
    __slots__ = ("agent_id", "updated_since", "page_size", "page_token", "owner")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    UPDATED_SINCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    updated_since: _timestamp_pb2.Timestamp
    page_size: int
    page_token: str
    owner: str
    def __init__(self, agent_id: _Optional[str] = ..., updated_since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class ListTracesResponse(_message.Message):
    __slots__ = ("traces", "next_page_token")
    TRACES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    traces: _containers.RepeatedCompositeFieldContainer[Trace]
    next_page_token: str
    def __init__(self, traces: _Optional[_Iterable[_Union[Trace, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PendingEvaluationsRequest(_message.Message):
    __slots__ = ("trace_id", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class PendingEvaluationsResponse(_message.Message):
    __slots__ = ("queries", "last_trigger")
    QUERIES_FIELD_NUMBER: _ClassVar[int]
    LAST_TRIGGER_FIELD_NUMBER: _ClassVar[int]
    queries: _containers.RepeatedCompositeFieldContainer[Event]
    last_trigger: str
    def __init__(self, queries: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., last_trigger: _Optional[str] = ...) -> None: ...

class SignalTriggerRequest(_message.Message):
    __slots__ = ("trace_id", "trigger", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    trigger: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., trigger: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class SignalTriggerResponse(_message.Message):
    __slots__ = ("query_sequences", "published", "trigger_id")
    QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    PUBLISHED_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_ID_FIELD_NUMBER: _ClassVar[int]
    query_sequences: _containers.RepeatedScalarFieldContainer[int]
    published: bool
    trigger_id: str
    def __init__(self, query_sequences: _Optional[_Iterable[int]] = ..., published: _Optional[bool] = ..., trigger_id: _Optional[str] = ...) -> None: ...

class Trigger(_message.Message):
    __slots__ = ("trigger_id", "trace_id", "trigger", "query_sequences", "owner", "agent_id", "signaled_at", "delivery_count")
    TRIGGER_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNALED_AT_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_COUNT_FIELD_NUMBER: _ClassVar[int]
    trigger_id: str
    trace_id: str
    trigger: str
    query_sequences: _containers.RepeatedScalarFieldContainer[int]
    owner: str
    agent_id: str
    signaled_at: _timestamp_pb2.Timestamp
    delivery_count: int
    def __init__(self, trigger_id: _Optional[str] = ..., trace_id: _Optional[str] = ..., trigger: _Optional[str] = ..., query_sequences: _Optional[_Iterable[int]] = ..., owner: _Optional[str] = ..., agent_id: _Optional[str] = ..., signaled_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delivery_count: _Optional[int] = ...) -> None: ...

class WatchTriggersRequest(_message.Message):
    __slots__ = ("group", "consumer")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    CONSUMER_FIELD_NUMBER: _ClassVar[int]
    group: str
    consumer: str
    def __init__(self, group: _Optional[str] = ..., consumer: _Optional[str] = ...) -> None: ...

class WatchTriggersResponse(_message.Message):
    __slots__ = ("trigger",)
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    trigger: Trigger
    def __init__(self, trigger: _Optional[_Union[Trigger, _Mapping]] = ...) -> None: ...

class AckTriggersRequest(_message.Message):
    __slots__ = ("group", "trigger_ids")
    GROUP_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_IDS_FIELD_NUMBER: _ClassVar[int]
    group: str
    trigger_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, group: _Optional[str] = ..., trigger_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AckTriggersResponse(_message.Message):
    __slots__ = ("acknowledged",)
    ACKNOWLEDGED_FIELD_NUMBER: _ClassVar[int]
    acknowledged: int
    def __init__(self, acknowledged: _Optional[int] = ...) -> None: ...

class GetEvaluationPromptRequest(_message.Message):
    __slots__ = ("trace_id", "mission", "goal", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    MISSION_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    mission: str
    goal: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., mission: _Optional[str] = ..., goal: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class GetEvaluationPromptResponse(_message.Message):
    __slots__ = ("prompt", "query_sequences")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    prompt: str
    query_sequences: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, prompt: _Optional[str] = ..., query_sequences: _Optional[_Iterable[int]] = ...) -> None: ...

class Assessment(_message.Message):
    __slots__ = ("knowledge_id", "status", "reason")
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    knowledge_id: str
    status: str
    reason: str
    def __init__(self, knowledge_id: _Optional[str] = ..., status: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class QueryEvaluation(_message.Message):
    __slots__ = ("query_sequence", "assessments")
    QUERY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    ASSESSMENTS_FIELD_NUMBER: _ClassVar[int]
    query_sequence: int
    assessments: _containers.RepeatedCompositeFieldContainer[Assessment]
    def __init__(self, query_sequence: _Optional[int] = ..., assessments: _Optional[_Iterable[_Union[Assessment, _Mapping]]] = ...) -> None: ...

class SubmitEvaluationRequest(_message.Message):
    __slots__ = ("trace_id", "raw_text", "evaluations", "trigger", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    RAW_TEXT_FIELD_NUMBER: _ClassVar[int]
    EVALUATIONS_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    raw_text: str
    evaluations: _containers.RepeatedCompositeFieldContainer[QueryEvaluation]
    trigger: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., raw_text: _Optional[str] = ..., evaluations: _Optional[_Iterable[_Union[QueryEvaluation, _Mapping]]] = ..., trigger: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class EvaluationOutcome(_message.Message):
    __slots__ = ("query_sequence", "knowledge_id", "status", "recorded", "feedback", "detail")
    QUERY_SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RECORDED_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    query_sequence: int
    knowledge_id: str
    status: str
    recorded: bool
    feedback: FeedbackState
    detail: str
    def __init__(self, query_sequence: _Optional[int] = ..., knowledge_id: _Optional[str] = ..., status: _Optional[str] = ..., recorded: _Optional[bool] = ..., feedback: _Optional[_Union[FeedbackState, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class SubmitEvaluationResponse(_message.Message):
    __slots__ = ("outcomes", "pending_query_sequences", "parse_failed", "parse_error")
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    PENDING_QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    PARSE_FAILED_FIELD_NUMBER: _ClassVar[int]
    PARSE_ERROR_FIELD_NUMBER: _ClassVar[int]
    outcomes: _containers.RepeatedCompositeFieldContainer[EvaluationOutcome]
    pending_query_sequences: _containers.RepeatedScalarFieldContainer[int]
    parse_failed: bool
    parse_error: str
    def __init__(self, outcomes: _Optional[_Iterable[_Union[EvaluationOutcome, _Mapping]]] = ..., pending_query_sequences: _Optional[_Iterable[int]] = ..., parse_failed: _Optional[bool] = ..., parse_error: _Optional[str] = ...) -> None: ...

class AbandonEvaluationRequest(_message.Message):
    __slots__ = ("trace_id", "owner", "trigger_id", "reason", "deliveries")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    TRIGGER_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DELIVERIES_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    trigger_id: str
    reason: str
    deliveries: int
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ..., trigger_id: _Optional[str] = ..., reason: _Optional[str] = ..., deliveries: _Optional[int] = ...) -> None: ...

class AbandonEvaluationResponse(_message.Message):
    __slots__ = ("event_id", "query_sequences")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    event_id: str
    query_sequences: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, event_id: _Optional[str] = ..., query_sequences: _Optional[_Iterable[int]] = ...) -> None: ...

class Extraction(_message.Message):
    __slots__ = ("trace_id", "owner", "extraction_id", "state", "sequence", "goal_id", "branch_id", "payload", "edited_payload", "knowledge_id", "created_at", "reviewed_at", "committed_at")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOAL_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    EDITED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_AT_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_AT_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    extraction_id: str
    state: str
    sequence: int
    goal_id: str
    branch_id: str
    payload: ExtractionPayload
    edited_payload: ExtractionPayload
    knowledge_id: str
    created_at: _timestamp_pb2.Timestamp
    reviewed_at: _timestamp_pb2.Timestamp
    committed_at: _timestamp_pb2.Timestamp
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ..., extraction_id: _Optional[str] = ..., state: _Optional[str] = ..., sequence: _Optional[int] = ..., goal_id: _Optional[str] = ..., branch_id: _Optional[str] = ..., payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ..., edited_payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ..., knowledge_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reviewed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., committed_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class SavePendingExtractionRequest(_message.Message):
    __slots__ = ("trace_id", "sequence", "goal_id", "branch_id", "payload", "request_id", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    GOAL_ID_FIELD_NUMBER: _ClassVar[int]
    BRANCH_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    sequence: int
    goal_id: str
    branch_id: str
    payload: ExtractionPayload
    request_id: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., sequence: _Optional[int] = ..., goal_id: _Optional[str] = ..., branch_id: _Optional[str] = ..., payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ..., request_id: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class SavePendingExtractionResponse(_message.Message):
    __slots__ = ("extraction", "commit_failure")
    EXTRACTION_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FAILURE_FIELD_NUMBER: _ClassVar[int]
    extraction: Extraction
    commit_failure: CommitFailure
    def __init__(self, extraction: _Optional[_Union[Extraction, _Mapping]] = ..., commit_failure: _Optional[_Union[CommitFailure, _Mapping]] = ...) -> None: ...

class ListExtractionsRequest(_message.Message):
    __slots__ = ("trace_id", "owner", "states", "page_size", "page_token")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    STATES_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    states: _containers.RepeatedScalarFieldContainer[str]
    page_size: int
    page_token: str
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ..., states: _Optional[_Iterable[str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListExtractionsResponse(_message.Message):
    __slots__ = ("extractions", "next_page_token")
    EXTRACTIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    extractions: _containers.RepeatedCompositeFieldContainer[Extraction]
    next_page_token: str
    def __init__(self, extractions: _Optional[_Iterable[_Union[Extraction, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ReviewExtractionRequest(_message.Message):
    __slots__ = ("trace_id", "extraction_id", "decision", "edited_payload", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    EDITED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    extraction_id: str
    decision: str
    edited_payload: ExtractionPayload
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., extraction_id: _Optional[str] = ..., decision: _Optional[str] = ..., edited_payload: _Optional[_Union[ExtractionPayload, _Mapping]] = ..., owner: _Optional[str] = ...) -> None: ...

class ReviewExtractionResponse(_message.Message):
    __slots__ = ("extraction",)
    EXTRACTION_FIELD_NUMBER: _ClassVar[int]
    extraction: Extraction
    def __init__(self, extraction: _Optional[_Union[Extraction, _Mapping]] = ...) -> None: ...

class CommitExtractionsRequest(_message.Message):
    __slots__ = ("trace_id", "extraction_ids", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_IDS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    extraction_ids: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., extraction_ids: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ...) -> None: ...

class CommittedExtraction(_message.Message):
    __slots__ = ("extraction_id", "knowledge_id", "linked")
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    LINKED_FIELD_NUMBER: _ClassVar[int]
    extraction_id: str
    knowledge_id: str
    linked: bool
    def __init__(self, extraction_id: _Optional[str] = ..., knowledge_id: _Optional[str] = ..., linked: _Optional[bool] = ...) -> None: ...

class CommitFailure(_message.Message):
    __slots__ = ("extraction_id", "code", "message")
    EXTRACTION_ID_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    extraction_id: str
    code: str
    message: str
    def __init__(self, extraction_id: _Optional[str] = ..., code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class CommitExtractionsResponse(_message.Message):
    __slots__ = ("committed", "failed")
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    committed: _containers.RepeatedCompositeFieldContainer[CommittedExtraction]
    failed: _containers.RepeatedCompositeFieldContainer[CommitFailure]
    def __init__(self, committed: _Optional[_Iterable[_Union[CommittedExtraction, _Mapping]]] = ..., failed: _Optional[_Iterable[_Union[CommitFailure, _Mapping]]] = ...) -> None: ...

class GetTraceViewRequest(_message.Message):
    __slots__ = ("trace_id", "job_id", "plan_diff_from", "plan_diff_to", "page_size", "page_token", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    PLAN_DIFF_FROM_FIELD_NUMBER: _ClassVar[int]
    PLAN_DIFF_TO_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    job_id: str
    plan_diff_from: int
    plan_diff_to: int
    page_size: int
    page_token: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., job_id: _Optional[str] = ..., plan_diff_from: _Optional[int] = ..., plan_diff_to: _Optional[int] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class TimelineStep(_message.Message):
    __slots__ = ("sequence", "events")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    events: _containers.RepeatedCompositeFieldContainer[Event]
    def __init__(self, sequence: _Optional[int] = ..., events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ...) -> None: ...

class KnowledgeEvaluationSummary(_message.Message):
    __slots__ = ("knowledge_id", "queried", "helpful", "harmful", "neutral", "unused", "irrelevant", "feedback_deferred", "feedback_refused")
    KNOWLEDGE_ID_FIELD_NUMBER: _ClassVar[int]
    QUERIED_FIELD_NUMBER: _ClassVar[int]
    HELPFUL_FIELD_NUMBER: _ClassVar[int]
    HARMFUL_FIELD_NUMBER: _ClassVar[int]
    NEUTRAL_FIELD_NUMBER: _ClassVar[int]
    UNUSED_FIELD_NUMBER: _ClassVar[int]
    IRRELEVANT_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_DEFERRED_FIELD_NUMBER: _ClassVar[int]
    FEEDBACK_REFUSED_FIELD_NUMBER: _ClassVar[int]
    knowledge_id: str
    queried: int
    helpful: int
    harmful: int
    neutral: int
    unused: int
    irrelevant: int
    feedback_deferred: int
    feedback_refused: int
    def __init__(self, knowledge_id: _Optional[str] = ..., queried: _Optional[int] = ..., helpful: _Optional[int] = ..., harmful: _Optional[int] = ..., neutral: _Optional[int] = ..., unused: _Optional[int] = ..., irrelevant: _Optional[int] = ..., feedback_deferred: _Optional[int] = ..., feedback_refused: _Optional[int] = ...) -> None: ...

class ExtractionFunnel(_message.Message):
    __slots__ = ("saved", "reviewed", "pending", "approved", "edited", "discarded", "committed")
    SAVED_FIELD_NUMBER: _ClassVar[int]
    REVIEWED_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    APPROVED_FIELD_NUMBER: _ClassVar[int]
    EDITED_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_FIELD_NUMBER: _ClassVar[int]
    COMMITTED_FIELD_NUMBER: _ClassVar[int]
    saved: int
    reviewed: int
    pending: int
    approved: int
    edited: int
    discarded: int
    committed: int
    def __init__(self, saved: _Optional[int] = ..., reviewed: _Optional[int] = ..., pending: _Optional[int] = ..., approved: _Optional[int] = ..., edited: _Optional[int] = ..., discarded: _Optional[int] = ..., committed: _Optional[int] = ...) -> None: ...

class MemoryTypeCount(_message.Message):
    __slots__ = ("memory_type", "reads", "writes")
    MEMORY_TYPE_FIELD_NUMBER: _ClassVar[int]
    READS_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    memory_type: str
    reads: int
    writes: int
    def __init__(self, memory_type: _Optional[str] = ..., reads: _Optional[int] = ..., writes: _Optional[int] = ...) -> None: ...

class TraceHeader(_message.Message):
    __slots__ = ("job_id", "job_ids", "agent_id", "goal", "status", "cursor_node_id", "cursor_step_index", "plan_version")
    JOB_ID_FIELD_NUMBER: _ClassVar[int]
    JOB_IDS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CURSOR_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    CURSOR_STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    job_id: str
    job_ids: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    goal: str
    status: JobStatus
    cursor_node_id: str
    cursor_step_index: int
    plan_version: int
    def __init__(self, job_id: _Optional[str] = ..., job_ids: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ..., goal: _Optional[str] = ..., status: _Optional[_Union[JobStatus, str]] = ..., cursor_node_id: _Optional[str] = ..., cursor_step_index: _Optional[int] = ..., plan_version: _Optional[int] = ...) -> None: ...

class NodeAttempt(_message.Message):
    __slots__ = ("attempt", "state", "started_at", "finished_at", "duration_ms", "reason", "worker_id", "step_index")
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    STARTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    WORKER_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    attempt: int
    state: NodeState
    started_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    duration_ms: int
    reason: str
    worker_id: str
    step_index: int
    def __init__(self, attempt: _Optional[int] = ..., state: _Optional[_Union[NodeState, str]] = ..., started_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., duration_ms: _Optional[int] = ..., reason: _Optional[str] = ..., worker_id: _Optional[str] = ..., step_index: _Optional[int] = ...) -> None: ...

class ReasoningStep(_message.Message):
    __slots__ = ("node_id", "step_index", "state", "attempts", "cards", "memory", "plan_version")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    step_index: int
    state: NodeState
    attempts: _containers.RepeatedCompositeFieldContainer[NodeAttempt]
    cards: _containers.RepeatedCompositeFieldContainer[Event]
    memory: _containers.RepeatedCompositeFieldContainer[Event]
    plan_version: int
    def __init__(self, node_id: _Optional[str] = ..., step_index: _Optional[int] = ..., state: _Optional[_Union[NodeState, str]] = ..., attempts: _Optional[_Iterable[_Union[NodeAttempt, _Mapping]]] = ..., cards: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., memory: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., plan_version: _Optional[int] = ...) -> None: ...

class GraphEdge(_message.Message):
    __slots__ = ("from_node_id", "to_node_id", "execution_order")
    FROM_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    TO_NODE_ID_FIELD_NUMBER: _ClassVar[int]
    EXECUTION_ORDER_FIELD_NUMBER: _ClassVar[int]
    from_node_id: str
    to_node_id: str
    execution_order: int
    def __init__(self, from_node_id: _Optional[str] = ..., to_node_id: _Optional[str] = ..., execution_order: _Optional[int] = ...) -> None: ...

class DecisionTreeNode(_message.Message):
    __slots__ = ("node_id", "node_type", "tool_name", "description", "state", "attempts", "step_index", "choices", "branch", "leaf", "in_current_plan")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHOICES_FIELD_NUMBER: _ClassVar[int]
    BRANCH_FIELD_NUMBER: _ClassVar[int]
    LEAF_FIELD_NUMBER: _ClassVar[int]
    IN_CURRENT_PLAN_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    node_type: str
    tool_name: str
    description: str
    state: NodeState
    attempts: int
    step_index: int
    choices: _containers.RepeatedCompositeFieldContainer[Event]
    branch: bool
    leaf: bool
    in_current_plan: bool
    def __init__(self, node_id: _Optional[str] = ..., node_type: _Optional[str] = ..., tool_name: _Optional[str] = ..., description: _Optional[str] = ..., state: _Optional[_Union[NodeState, str]] = ..., attempts: _Optional[int] = ..., step_index: _Optional[int] = ..., choices: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., branch: _Optional[bool] = ..., leaf: _Optional[bool] = ..., in_current_plan: _Optional[bool] = ...) -> None: ...

class DecisionTree(_message.Message):
    __slots__ = ("nodes", "edges", "root_node_ids", "plan_version")
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    ROOT_NODE_IDS_FIELD_NUMBER: _ClassVar[int]
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[DecisionTreeNode]
    edges: _containers.RepeatedCompositeFieldContainer[GraphEdge]
    root_node_ids: _containers.RepeatedScalarFieldContainer[str]
    plan_version: int
    def __init__(self, nodes: _Optional[_Iterable[_Union[DecisionTreeNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[GraphEdge, _Mapping]]] = ..., root_node_ids: _Optional[_Iterable[str]] = ..., plan_version: _Optional[int] = ...) -> None: ...

class PlanSnapshot(_message.Message):
    __slots__ = ("plan_version", "source", "event_ids", "timestamp", "goal", "task_graph", "task_graph_summary", "reasoning_summary", "memory_summary", "memory_keys", "plan_hash", "diff_summary", "diff_computed")
    PLAN_VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    GOAL_FIELD_NUMBER: _ClassVar[int]
    TASK_GRAPH_FIELD_NUMBER: _ClassVar[int]
    TASK_GRAPH_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    REASONING_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    MEMORY_KEYS_FIELD_NUMBER: _ClassVar[int]
    PLAN_HASH_FIELD_NUMBER: _ClassVar[int]
    DIFF_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DIFF_COMPUTED_FIELD_NUMBER: _ClassVar[int]
    plan_version: int
    source: str
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    timestamp: _timestamp_pb2.Timestamp
    goal: str
    task_graph: TaskGraph
    task_graph_summary: str
    reasoning_summary: str
    memory_summary: str
    memory_keys: _containers.RepeatedScalarFieldContainer[str]
    plan_hash: str
    diff_summary: str
    diff_computed: bool
    def __init__(self, plan_version: _Optional[int] = ..., source: _Optional[str] = ..., event_ids: _Optional[_Iterable[str]] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., goal: _Optional[str] = ..., task_graph: _Optional[_Union[TaskGraph, _Mapping]] = ..., task_graph_summary: _Optional[str] = ..., reasoning_summary: _Optional[str] = ..., memory_summary: _Optional[str] = ..., memory_keys: _Optional[_Iterable[str]] = ..., plan_hash: _Optional[str] = ..., diff_summary: _Optional[str] = ..., diff_computed: _Optional[bool] = ...) -> None: ...

class NodeChange(_message.Message):
    __slots__ = ("node_id", "changes")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    changes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, node_id: _Optional[str] = ..., changes: _Optional[_Iterable[str]] = ...) -> None: ...

class PlanDiff(_message.Message):
    __slots__ = ("from_version", "to_version", "summary", "computed", "goal_changed", "added_nodes", "removed_nodes", "changed_nodes", "added_edges", "removed_edges")
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    COMPUTED_FIELD_NUMBER: _ClassVar[int]
    GOAL_CHANGED_FIELD_NUMBER: _ClassVar[int]
    ADDED_NODES_FIELD_NUMBER: _ClassVar[int]
    REMOVED_NODES_FIELD_NUMBER: _ClassVar[int]
    CHANGED_NODES_FIELD_NUMBER: _ClassVar[int]
    ADDED_EDGES_FIELD_NUMBER: _ClassVar[int]
    REMOVED_EDGES_FIELD_NUMBER: _ClassVar[int]
    from_version: int
    to_version: int
    summary: str
    computed: bool
    goal_changed: bool
    added_nodes: _containers.RepeatedCompositeFieldContainer[TaskNode]
    removed_nodes: _containers.RepeatedCompositeFieldContainer[TaskNode]
    changed_nodes: _containers.RepeatedCompositeFieldContainer[NodeChange]
    added_edges: _containers.RepeatedCompositeFieldContainer[TaskEdge]
    removed_edges: _containers.RepeatedCompositeFieldContainer[TaskEdge]
    def __init__(self, from_version: _Optional[int] = ..., to_version: _Optional[int] = ..., summary: _Optional[str] = ..., computed: _Optional[bool] = ..., goal_changed: _Optional[bool] = ..., added_nodes: _Optional[_Iterable[_Union[TaskNode, _Mapping]]] = ..., removed_nodes: _Optional[_Iterable[_Union[TaskNode, _Mapping]]] = ..., changed_nodes: _Optional[_Iterable[_Union[NodeChange, _Mapping]]] = ..., added_edges: _Optional[_Iterable[_Union[TaskEdge, _Mapping]]] = ..., removed_edges: _Optional[_Iterable[_Union[TaskEdge, _Mapping]]] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("tool_name", "reason", "input_summary", "output_summary", "error", "external_id", "idempotent", "rollback_available", "attempt", "selected_event_id", "result_event_id", "selected_at", "finished_at")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    INPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SUMMARY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    EXTERNAL_ID_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENT_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPT_FIELD_NUMBER: _ClassVar[int]
    SELECTED_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SELECTED_AT_FIELD_NUMBER: _ClassVar[int]
    FINISHED_AT_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    reason: str
    input_summary: str
    output_summary: str
    error: str
    external_id: str
    idempotent: bool
    rollback_available: bool
    attempt: int
    selected_event_id: str
    result_event_id: str
    selected_at: _timestamp_pb2.Timestamp
    finished_at: _timestamp_pb2.Timestamp
    def __init__(self, tool_name: _Optional[str] = ..., reason: _Optional[str] = ..., input_summary: _Optional[str] = ..., output_summary: _Optional[str] = ..., error: _Optional[str] = ..., external_id: _Optional[str] = ..., idempotent: _Optional[bool] = ..., rollback_available: _Optional[bool] = ..., attempt: _Optional[int] = ..., selected_event_id: _Optional[str] = ..., result_event_id: _Optional[str] = ..., selected_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finished_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ToolGraphNode(_message.Message):
    __slots__ = ("node_id", "node_type", "description", "tool_node", "state", "finish_order", "calls", "in_current_plan", "step_index")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    NODE_TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    TOOL_NODE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    FINISH_ORDER_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    IN_CURRENT_PLAN_FIELD_NUMBER: _ClassVar[int]
    STEP_INDEX_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    node_type: str
    description: str
    tool_node: bool
    state: NodeState
    finish_order: int
    calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    in_current_plan: bool
    step_index: int
    def __init__(self, node_id: _Optional[str] = ..., node_type: _Optional[str] = ..., description: _Optional[str] = ..., tool_node: _Optional[bool] = ..., state: _Optional[_Union[NodeState, str]] = ..., finish_order: _Optional[int] = ..., calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., in_current_plan: _Optional[bool] = ..., step_index: _Optional[int] = ...) -> None: ...

class ToolGraph(_message.Message):
    __slots__ = ("nodes", "edges")
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[ToolGraphNode]
    edges: _containers.RepeatedCompositeFieldContainer[GraphEdge]
    def __init__(self, nodes: _Optional[_Iterable[_Union[ToolGraphNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[GraphEdge, _Mapping]]] = ...) -> None: ...

class GetTraceViewResponse(_message.Message):
    __slots__ = ("trace", "timeline", "memory_timeline", "memory_counts", "plan_evolution", "knowledge", "extraction_funnel", "reflections", "pending_query_sequences", "header", "reasoning_steps", "decision_tree", "plan_snapshots", "plan_diff", "tool_graph", "evaluation_failures", "abandoned_query_sequences", "window_events", "next_page_token")
    TRACE_FIELD_NUMBER: _ClassVar[int]
    TIMELINE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_TIMELINE_FIELD_NUMBER: _ClassVar[int]
    MEMORY_COUNTS_FIELD_NUMBER: _ClassVar[int]
    PLAN_EVOLUTION_FIELD_NUMBER: _ClassVar[int]
    KNOWLEDGE_FIELD_NUMBER: _ClassVar[int]
    EXTRACTION_FUNNEL_FIELD_NUMBER: _ClassVar[int]
    REFLECTIONS_FIELD_NUMBER: _ClassVar[int]
    PENDING_QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    REASONING_STEPS_FIELD_NUMBER: _ClassVar[int]
    DECISION_TREE_FIELD_NUMBER: _ClassVar[int]
    PLAN_SNAPSHOTS_FIELD_NUMBER: _ClassVar[int]
    PLAN_DIFF_FIELD_NUMBER: _ClassVar[int]
    TOOL_GRAPH_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_FAILURES_FIELD_NUMBER: _ClassVar[int]
    ABANDONED_QUERY_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    WINDOW_EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    trace: Trace
    timeline: _containers.RepeatedCompositeFieldContainer[TimelineStep]
    memory_timeline: _containers.RepeatedCompositeFieldContainer[Event]
    memory_counts: _containers.RepeatedCompositeFieldContainer[MemoryTypeCount]
    plan_evolution: _containers.RepeatedCompositeFieldContainer[Event]
    knowledge: _containers.RepeatedCompositeFieldContainer[KnowledgeEvaluationSummary]
    extraction_funnel: ExtractionFunnel
    reflections: _containers.RepeatedCompositeFieldContainer[Event]
    pending_query_sequences: _containers.RepeatedScalarFieldContainer[int]
    header: TraceHeader
    reasoning_steps: _containers.RepeatedCompositeFieldContainer[ReasoningStep]
    decision_tree: DecisionTree
    plan_snapshots: _containers.RepeatedCompositeFieldContainer[PlanSnapshot]
    plan_diff: PlanDiff
    tool_graph: ToolGraph
    evaluation_failures: _containers.RepeatedCompositeFieldContainer[Event]
    abandoned_query_sequences: _containers.RepeatedScalarFieldContainer[int]
    window_events: int
    next_page_token: str
    def __init__(self, trace: _Optional[_Union[Trace, _Mapping]] = ..., timeline: _Optional[_Iterable[_Union[TimelineStep, _Mapping]]] = ..., memory_timeline: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., memory_counts: _Optional[_Iterable[_Union[MemoryTypeCount, _Mapping]]] = ..., plan_evolution: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., knowledge: _Optional[_Iterable[_Union[KnowledgeEvaluationSummary, _Mapping]]] = ..., extraction_funnel: _Optional[_Union[ExtractionFunnel, _Mapping]] = ..., reflections: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., pending_query_sequences: _Optional[_Iterable[int]] = ..., header: _Optional[_Union[TraceHeader, _Mapping]] = ..., reasoning_steps: _Optional[_Iterable[_Union[ReasoningStep, _Mapping]]] = ..., decision_tree: _Optional[_Union[DecisionTree, _Mapping]] = ..., plan_snapshots: _Optional[_Iterable[_Union[PlanSnapshot, _Mapping]]] = ..., plan_diff: _Optional[_Union[PlanDiff, _Mapping]] = ..., tool_graph: _Optional[_Union[ToolGraph, _Mapping]] = ..., evaluation_failures: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., abandoned_query_sequences: _Optional[_Iterable[int]] = ..., window_events: _Optional[int] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ExportLogRequest(_message.Message):
    __slots__ = ("trace_id", "page_size", "page_token", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    page_size: int
    page_token: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class ExportLogResponse(_message.Message):
    __slots__ = ("document", "next_page_token")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    document: str
    next_page_token: str
    def __init__(self, document: _Optional[str] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ImportLogRequest(_message.Message):
    __slots__ = ("document", "trace_id")
    DOCUMENT_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    document: str
    trace_id: str
    def __init__(self, document: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class ImportLogResponse(_message.Message):
    __slots__ = ("trace", "imported")
    TRACE_FIELD_NUMBER: _ClassVar[int]
    IMPORTED_FIELD_NUMBER: _ClassVar[int]
    trace: Trace
    imported: int
    def __init__(self, trace: _Optional[_Union[Trace, _Mapping]] = ..., imported: _Optional[int] = ...) -> None: ...

class ConsumeReflectionsRequest(_message.Message):
    __slots__ = ("trace_id", "event_ids", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_IDS_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    event_ids: _containers.RepeatedScalarFieldContainer[str]
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., event_ids: _Optional[_Iterable[str]] = ..., owner: _Optional[str] = ...) -> None: ...

class ConsumeReflectionsResponse(_message.Message):
    __slots__ = ("consumed",)
    CONSUMED_FIELD_NUMBER: _ClassVar[int]
    consumed: int
    def __init__(self, consumed: _Optional[int] = ...) -> None: ...

class DeleteTraceRequest(_message.Message):
    __slots__ = ("trace_id", "owner")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    owner: str
    def __init__(self, trace_id: _Optional[str] = ..., owner: _Optional[str] = ...) -> None: ...

class ForgetCognitionSubjectRequest(_message.Message):
    __slots__ = ("subject",)
    SUBJECT_FIELD_NUMBER: _ClassVar[int]
    subject: str
    def __init__(self, subject: _Optional[str] = ...) -> None: ...

class ForgetCognitionSubjectResponse(_message.Message):
    __slots__ = ("erased",)
    class ErasedEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    ERASED_FIELD_NUMBER: _ClassVar[int]
    erased: _containers.ScalarMap[str, int]
    def __init__(self, erased: _Optional[_Mapping[str, int]] = ...) -> None: ...

class DeleteTraceResponse(_message.Message):
    __slots__ = ("deleted_events", "deleted_extractions")
    DELETED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    DELETED_EXTRACTIONS_FIELD_NUMBER: _ClassVar[int]
    deleted_events: int
    deleted_extractions: int
    def __init__(self, deleted_events: _Optional[int] = ..., deleted_extractions: _Optional[int] = ...) -> None: ...
