package postgres

// sqlProject is hitl.Interaction.Project in SQL, for ListFilter.Project:
// the metadata's "project", else its "cwd" (each when a non-empty
// string), else a shell action's cwd, else the empty string. Both columns are JSON
// text; the action column holds the action review, the action under its
// "action" key.
const sqlProject = `(CASE
	WHEN jsonb_typeof(metadata::jsonb -> 'project') = 'string' AND metadata::jsonb ->> 'project' <> '' THEN metadata::jsonb ->> 'project'
	WHEN jsonb_typeof(metadata::jsonb -> 'cwd') = 'string' AND metadata::jsonb ->> 'cwd' <> '' THEN metadata::jsonb ->> 'cwd'
	WHEN action::jsonb #>> '{action,kind}' = 'shell' AND jsonb_typeof(action::jsonb #> '{action,input,cwd}') = 'string' THEN action::jsonb #>> '{action,input,cwd}'
	ELSE '' END)`
