-- The newsroom's roles and the rules the database enforces, run by
-- `muse newsroom init` as the database's owner (idempotent: run it again
-- after an upgrade adds tables). Three group roles, cluster-wide, NOLOGIN:
-- muse_checker (reads the desk's cases, creates cases, changes its own),
-- muse_editor (also changes and deletes anyone's), muse_admin (also grants
-- the roles to logins). Identity is the PostgreSQL login, session_user,
-- which SET ROLE does not change.
DO $$
BEGIN
	BEGIN CREATE ROLE muse_checker NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
	BEGIN CREATE ROLE muse_editor NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
	BEGIN CREATE ROLE muse_admin NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END;
END $$;
GRANT muse_checker TO muse_editor;
GRANT muse_editor TO muse_admin;
GRANT muse_checker, muse_editor TO muse_admin WITH ADMIN OPTION;

-- Every store's tables: read and written by checkers (the job queue, the
-- archive, the cache, the spend ledger); the case tables are narrowed by
-- the policies below.
GRANT USAGE ON SCHEMA public TO muse_checker;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO muse_checker;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO muse_checker;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO muse_checker;
-- Tables a later migration adds, when the owner runs it, are granted too.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO muse_checker;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO muse_checker;

-- May the login change the case? Yes when the case is not there yet, is
-- theirs, or they are an editor.
CREATE OR REPLACE FUNCTION muse_may_change(case_id text) RETURNS boolean
LANGUAGE sql STABLE AS $f$
	SELECT pg_has_role(session_user, 'muse_editor', 'MEMBER')
		OR NOT EXISTS (SELECT 1 FROM cases c WHERE c.id = case_id)
		OR EXISTS (SELECT 1 FROM cases c WHERE c.id = case_id AND c.created_by = session_user)
$f$;
GRANT EXECUTE ON FUNCTION muse_may_change(text) TO muse_checker;

ALTER TABLE cases ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS muse_read ON cases;
DROP POLICY IF EXISTS muse_create ON cases;
DROP POLICY IF EXISTS muse_change ON cases;
DROP POLICY IF EXISTS muse_delete ON cases;
CREATE POLICY muse_read ON cases FOR SELECT TO muse_checker USING (true);
CREATE POLICY muse_create ON cases FOR INSERT TO muse_checker
	WITH CHECK (created_by = session_user AND updated_by = session_user);
CREATE POLICY muse_change ON cases FOR UPDATE TO muse_checker
	USING (created_by = session_user OR pg_has_role(session_user, 'muse_editor', 'MEMBER'))
	WITH CHECK (updated_by = session_user);
CREATE POLICY muse_delete ON cases FOR DELETE TO muse_editor USING (true);

ALTER TABLE drafts ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS muse_read ON drafts;
DROP POLICY IF EXISTS muse_add ON drafts;
DROP POLICY IF EXISTS muse_delete ON drafts;
CREATE POLICY muse_read ON drafts FOR SELECT TO muse_checker USING (true);
CREATE POLICY muse_add ON drafts FOR INSERT TO muse_checker
	WITH CHECK (author = session_user AND muse_may_change(case_id));
CREATE POLICY muse_delete ON drafts FOR DELETE TO muse_editor USING (true);

ALTER TABLE snapshots ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS muse_read ON snapshots;
DROP POLICY IF EXISTS muse_add ON snapshots;
DROP POLICY IF EXISTS muse_change ON snapshots;
DROP POLICY IF EXISTS muse_delete ON snapshots;
CREATE POLICY muse_read ON snapshots FOR SELECT TO muse_checker USING (true);
CREATE POLICY muse_add ON snapshots FOR INSERT TO muse_checker WITH CHECK (muse_may_change(case_id));
CREATE POLICY muse_change ON snapshots FOR UPDATE TO muse_checker USING (muse_may_change(case_id));
CREATE POLICY muse_delete ON snapshots FOR DELETE TO muse_editor USING (true);

ALTER TABLE case_versions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS muse_read ON case_versions;
DROP POLICY IF EXISTS muse_add ON case_versions;
DROP POLICY IF EXISTS muse_delete ON case_versions;
CREATE POLICY muse_read ON case_versions FOR SELECT TO muse_checker USING (true);
CREATE POLICY muse_add ON case_versions FOR INSERT TO muse_checker WITH CHECK (muse_may_change(case_id));
CREATE POLICY muse_delete ON case_versions FOR DELETE TO muse_editor USING (true);

-- The audit trail is append-only: the roles may read it and add to it in
-- their own name; nobody, its owner included, may change or remove a line
-- (the trigger holds for every role but one that drops it).
REVOKE UPDATE, DELETE, TRUNCATE ON audit FROM muse_checker;
ALTER TABLE audit ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS muse_read ON audit;
DROP POLICY IF EXISTS muse_add ON audit;
CREATE POLICY muse_read ON audit FOR SELECT TO muse_checker USING (true);
CREATE POLICY muse_add ON audit FOR INSERT TO muse_checker WITH CHECK (actor = session_user);
CREATE OR REPLACE FUNCTION muse_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $f$
BEGIN
	RAISE EXCEPTION 'the audit trail is append-only: % is refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$f$;
DROP TRIGGER IF EXISTS muse_append_only ON audit;
CREATE TRIGGER muse_append_only BEFORE UPDATE OR DELETE ON audit FOR EACH ROW EXECUTE FUNCTION muse_audit_append_only();
DROP TRIGGER IF EXISTS muse_append_only_truncate ON audit;
CREATE TRIGGER muse_append_only_truncate BEFORE TRUNCATE ON audit FOR EACH STATEMENT EXECUTE FUNCTION muse_audit_append_only();
