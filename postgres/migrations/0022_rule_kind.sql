-- A rule may decide a kind of action (shell, file.write, …) from every
-- agent, whatever each calls its tool: kind is that kind, and such a
-- rule's action_name is ''. '' is a rule on one action name, as before.
-- Every action's creation reads the rules on its name and those on its
-- kind, each by its own index.

ALTER TABLE rules ADD COLUMN kind text NOT NULL DEFAULT '';

CREATE INDEX rules_kind ON rules (kind, source_agent, created_at, id) WHERE kind <> '';
