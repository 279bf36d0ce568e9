-- Usage metrics (GET /v2/system/usage-metrics): the distinct users assigned a user task, by
-- minute. One row per (minute, assignee, tenant, partition) with the first and the last
-- assignment of that minute (epoch ms), so a window counts its distinct assignees with one
-- query over the minutes it spans, and the table grows with distinct (assignee, minute)
-- pairs, not with assignments. Root process instances and decision instances are counted
-- from their own tables by date.
CREATE TABLE usage_assignee (
    minute       BIGINT NOT NULL,
    assignee     TEXT COLLATE "C" NOT NULL,
    tenant_id    TEXT COLLATE "C" NOT NULL,
    partition_id BIGINT NOT NULL,
    first_at     BIGINT NOT NULL,
    last_at      BIGINT NOT NULL,
    PRIMARY KEY (minute, assignee, tenant_id, partition_id)
);
