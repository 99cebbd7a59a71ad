"""One example per route of the REST gateway, by operationId: the request body (proto3
JSON, or the agent tools' JSON) and, for the routes that take them, the URL's parameters.

The OpenAPI document carries them (Swagger UI at /docs/ fills "Try it out" with them) and
the REST reference shows them as curl commands. A test parses every body as the gateway
does, so an example that names a field or enum value the API does not know fails.
"""

from __future__ import annotations

from typing import Any

# Ids as the hub makes them; a reader puts in ids of their own hub.
KNOWLEDGE_ID = "knowledge-20261126-5b0e6f0a9c2d"
TRACE_ID = "triage-inc-7"
EXTRACTION_ID = "pending-3c9a1f0e"
RUN_ID = "dream-4f1c2b3a5d6e7f8091a2b3c4d5e6f708"
SCHEDULE_ID = "schedule-8e2d4c6b0a1f3e5d"
JOB_ID = "job-1"
MEMORY_JOB_ID = "5f0c7a2e9b1d4c3e8a6f2b0d1e9c7a53"
EVENT_ID = f"{MEMORY_JOB_ID}_0_sender"
TOKEN_REFERENCE = "credentials/website_a"
_CASE = {
    "task": "crawl site A",
    "outcome": "logged in on the first try",
    "trace_id": TRACE_ID,
    "query_sequence": 1,
}
_PAYLOAD = {
    "task": "Triage a disk-full incident",
    "content": "Check /var/log first: rotated logs fill it most often.",
    "types": ["strategy"],
    "score": 4,
}

# operationId -> the request body.
BODIES: dict[str, dict[str, Any]] = {
    # The agent tools' routes.
    "knowledge_save": {
        "task": "Log in to site A with Selenium",
        "content": "Use undetected_chromedriver; add random delays.",
        "types": ["tool", "strategy"],
        "tags": {"domain": "crawling"},
        "score": 4,
    },
    "knowledge_ask": {"query": "how do I log in to site A?", "top_k": 3},
    "knowledge_update": {"add_helpful_case": _CASE},
    "knowledge_batch_update": {
        "feedback_list": [{"knowledge_id": KNOWLEDGE_ID, "is_helpful": True, "case": _CASE}]
    },
    "knowledge_slim": {"dry_run": True},
    "knowledge_edit": {
        "content": "Use undetected_chromedriver 3; add random delays.",
        "tags": {"domain": "crawling", "site": "a"},
    },
    "forget": {"subject": "user:bob"},
    "extraction_review": {"decision": "approve"},
    # knowledge
    "knowledge.SaveKnowledge": {
        "task": "Log in to site A with Selenium",
        "content": "Use undetected_chromedriver; add random delays.",
        "types": ["tool"],
        "source": {"name": "crawler-agent"},
    },
    "knowledge.BatchSaveKnowledge": {
        "requests": [
            {
                "task": "Parse a PDF invoice",
                "content": "pdfplumber keeps the table layout.",
                "types": ["tool"],
            },
            {
                "task": "Retry a flaky API",
                "content": "Back off exponentially, cap at 30 s.",
                "types": ["strategy"],
            },
        ]
    },
    "knowledge.GetKnowledge": {"id": KNOWLEDGE_ID},
    "knowledge.ListKnowledge": {
        "page_size": 10,
        "types": ["tool"],
        "order_by": "KNOWLEDGE_ORDER_CONFIDENCE",
    },
    "knowledge.SearchKnowledge": {"query": "selenium login", "top_k": 3},
    "knowledge.UpdateKnowledge": {"id": KNOWLEDGE_ID, "update_score": 5},
    "knowledge.BatchUpdateKnowledge": {
        "feedback_list": [
            {
                "knowledge_id": KNOWLEDGE_ID,
                "is_helpful": False,
                "case": {"task": "crawl site A", "outcome": "captcha", "reason": "site changed"},
            }
        ]
    },
    "knowledge.DeleteKnowledge": {"id": KNOWLEDGE_ID},
    "knowledge.UndeleteKnowledge": {"id": KNOWLEDGE_ID},
    "knowledge.ForgetKnowledgeSubject": {"subject": "user:bob"},
    "knowledge.SlimKnowledge": {"dry_run": True},
    "knowledge.ListKnowledgeVersions": {"id": KNOWLEDGE_ID},
    "knowledge.AskKnowledge": {
        "query": "how do I log in to site A?",
        "top_k": 3,
        "trace_id": TRACE_ID,
        "sequence": 2,
    },
    # resource
    "resource.SaveResource": {
        "id": TOKEN_REFERENCE,
        "title": "Site A login",
        "body": "user: crawler",
        "secure_body": "s3cret-password",
        "content_type": "RESOURCE_CONTENT_TYPE_CREDENTIAL",
        "scopes": ["team:crawling"],
    },
    "resource.GetResource": {"id": TOKEN_REFERENCE, "include_secure": True},
    "resource.BatchGetResources": {
        "ids": [TOKEN_REFERENCE, "snippets/retry.py"],
        "view": "RESOURCE_VIEW_BASIC",
    },
    "resource.ListResources": {"prefix": "credentials/", "page_size": 20},
    "resource.SearchResources": {"query": "site A login", "top_k": 5},
    "resource.DeleteResource": {"id": TOKEN_REFERENCE},
    "resource.UndeleteResource": {"id": TOKEN_REFERENCE},
    "resource.DestroyResource": {"id": TOKEN_REFERENCE},
    "resource.ListResourceVersions": {"id": TOKEN_REFERENCE},
    "resource.ListAuditEvents": {"resource_id": TOKEN_REFERENCE, "page_size": 50},
    "resource.RotateMasterKey": {},
    "resource.ForgetResourceSubject": {"subject": "user:bob"},
    # cognition
    "cognition.AppendEvents": {
        "trace_id": TRACE_ID,
        "task": "Triage INC-7",
        "events": [{"message": {"role": "user", "content": "Disk full on web-1"}}],
    },
    "cognition.GetLog": {"trace_id": TRACE_ID, "types": ["message", "query"], "page_size": 100},
    "cognition.ListTraces": {"updated_since": "2026-11-01T00:00:00Z", "page_size": 20},
    "cognition.PendingEvaluations": {"trace_id": TRACE_ID},
    "cognition.SignalTrigger": {"trace_id": TRACE_ID, "trigger": "task_completion"},
    "cognition.WatchTriggers": {"group": "evaluators", "consumer": "evaluator-1"},
    "cognition.AckTriggers": {"group": "evaluators", "trigger_ids": ["1795718756968-0"]},
    "cognition.GetEvaluationPrompt": {
        "trace_id": TRACE_ID,
        "mission": "Keep web-1 up",
        "goal": "Triage INC-7",
    },
    "cognition.SubmitEvaluation": {
        "trace_id": TRACE_ID,
        "evaluations": [
            {
                "query_sequence": 2,
                "assessments": [
                    {
                        "knowledge_id": KNOWLEDGE_ID,
                        "status": "helpful",
                        "reason": "the log rotation hint found the cause",
                    }
                ],
            }
        ],
    },
    "cognition.AbandonEvaluation": {"trace_id": TRACE_ID, "reason": "no model configured"},
    "cognition.SavePendingExtraction": {"trace_id": TRACE_ID, "sequence": 3, "payload": _PAYLOAD},
    "cognition.ListExtractions": {"trace_id": TRACE_ID, "states": ["pending"]},
    "cognition.ReviewExtraction": {
        "trace_id": TRACE_ID,
        "extraction_id": EXTRACTION_ID,
        "decision": "edit",
        "edited_payload": _PAYLOAD,
    },
    "cognition.CommitExtractions": {"trace_id": TRACE_ID, "extraction_ids": [EXTRACTION_ID]},
    "cognition.GetTraceView": {"trace_id": TRACE_ID, "page_size": 50},
    "cognition.ExportLog": {"trace_id": TRACE_ID},
    "cognition.ImportLog": {
        "document": '{"format": "knowhub.trace.v1", ...}',
        "trace_id": "triage-inc-7-copy",
    },
    "cognition.ConsumeReflections": {"trace_id": TRACE_ID, "event_ids": ["1795718756968-3"]},
    "cognition.DeleteTrace": {"trace_id": TRACE_ID},
    "cognition.ForgetCognitionSubject": {"subject": "user:bob"},
    # dream
    "dream.Remember": {
        "memo": "Alice prefers answers in French.",
        "context": {"user_id": "alice", "request_type": "REQUEST_TYPE_PRIVATE"},
    },
    "dream.RecentMemos": {"user_id": "alice", "request_type": "REQUEST_TYPE_PRIVATE", "limit": 5},
    "dream.SearchEvents": {
        "query": "language preference",
        "target_user_id": "alice",
        "top_k": 5,
        "time_from": "2026-11-01T00:00:00Z",
    },
    "dream.ListEvents": {
        "target_user_id": "alice",
        "time_from": "2026-11-01T00:00:00Z",
        "page_size": 20,
    },
    "dream.GetProfile": {"entity_type": "ENTITY_TYPE_USER", "entity_id": "alice"},
    "dream.ListProfiles": {"entity_type": "ENTITY_TYPE_USER", "page_size": 20},
    "dream.SearchProfiles": {
        "query": "speaks French",
        "entity_type": "ENTITY_TYPE_USER",
        "top_k": 5,
    },
    "dream.ListProfileRevisions": {"entity_type": "ENTITY_TYPE_USER", "entity_id": "alice"},
    "dream.RestoreProfileRevision": {
        "entity_type": "ENTITY_TYPE_USER",
        "entity_id": "alice",
        "revision": 3,
    },
    "dream.GetMemoryJob": {"job_id": MEMORY_JOB_ID},
    "dream.GetEvent": {"event_id": EVENT_ID},
    "dream.UpdateEvent": {"event_id": EVENT_ID, "text": "Alice prefers answers in German."},
    "dream.DeleteEvent": {"event_id": EVENT_ID},
    "dream.UndeleteEvent": {"event_id": EVENT_ID},
    "dream.UpdateMemo": {
        "request_type": "REQUEST_TYPE_PRIVATE",
        "user_id": "alice",
        "job_id": MEMORY_JOB_ID,
        "text": "answered in German",
    },
    "dream.DeleteMemo": {
        "request_type": "REQUEST_TYPE_PRIVATE",
        "user_id": "alice",
        "job_id": MEMORY_JOB_ID,
    },
    "dream.UpdateProfile": {
        "entity_type": "ENTITY_TYPE_USER",
        "entity_id": "alice",
        "update_mask": "summary",
        "summary": "Speaks German and French.",
    },
    "dream.DeleteProfile": {"entity_type": "ENTITY_TYPE_USER", "entity_id": "alice"},
    "dream.WriteMemoryDocument": {
        "agent_id": "crawler-agent",
        "path": "notes.md",
        "content": "Site A logs out after an hour.",
        "mode": "DOCUMENT_WRITE_MODE_APPEND",
    },
    "dream.DeleteMemoryDocument": {"agent_id": "crawler-agent", "path": "notes.md"},
    "dream.ListFailedJobs": {"page_size": 20},
    "dream.RetryFailedJob": {"job_id": JOB_ID},
    "dream.RunDream": {
        "agent_id": "crawler-agent",
        "phases": ["DREAM_PHASE_PER_TRACE_REFLECT", "DREAM_PHASE_CROSS_TRACE_INTEGRATE"],
    },
    "dream.GetDreamRun": {"run_id": RUN_ID},
    "dream.ListDreamRuns": {"agent_id": "crawler-agent", "page_size": 10},
    "dream.ScheduleDream": {
        "agent_id": "crawler-agent",
        "cron": "0 3 * * *",
        "time_zone": "Europe/Paris",
    },
    "dream.ListSchedules": {"agent_id": "crawler-agent"},
    "dream.DeleteSchedule": {"schedule_id": SCHEDULE_ID},
    "dream.ListMemoryDocuments": {"agent_id": "crawler-agent", "include_content": False},
    "dream.GetMemoryDocument": {"agent_id": "crawler-agent", "path": "MEMORY.md"},
    "dream.ForgetDreamSubject": {"subject": "agent:crawler-agent"},
    # admin
    "admin.CreateBackup": {"destination": "/srv/backups/knowhub-2026-11-26"},
    "admin.ForgetSubject": {"subject": "user:bob"},
}

# operationId -> {parameter name: example value} of the URL (path and query).
PARAMETERS: dict[str, dict[str, Any]] = {
    "knowledge_search": {
        "q": "selenium login",
        "top_k": 3,
        "min_score": 3,
        "types": "tool,strategy",
        "min_relevance": 0.25,
    },
    "knowledge_list": {
        "limit": 10,
        "types": "tool",
        "scopes": "team:crawling",
        "page_token": "",
        "order": "confidence",
    },
    "knowledge_update": {"id": KNOWLEDGE_ID},
    "knowledge_edit": {
        "id": KNOWLEDGE_ID,
        "update_mask": "content,tags",
        "change_note": "chromedriver 3 is needed since March",
    },
    "knowledge_delete": {"id": KNOWLEDGE_ID},
    "knowledge_undelete": {"id": KNOWLEDGE_ID},
    "knowledge_versions": {"id": KNOWLEDGE_ID},
    "resource_get": {"id": TOKEN_REFERENCE, "include_secure": True, "version": 2},
    "extraction_review": {"tid": TRACE_ID, "eid": EXTRACTION_ID},
}
