-- The users (Camunda 8.8's identity), as partition 1's USER records leave them
-- (zest-history/src/project/users.rs): searched by `POST /v2/users/search`. The key is the
-- user key partition 1 made; the password's hash is not kept here.

CREATE TABLE identity_user (
    key      INTEGER PRIMARY KEY,
    username TEXT NOT NULL,
    name     TEXT NOT NULL DEFAULT '',
    email    TEXT NOT NULL DEFAULT ''
);

CREATE INDEX identity_user_by_username ON identity_user (username);
