package sqlite

// sqlProject is hitl.Interaction.Project in SQL, for ListFilter.Project:
// the metadata's "project", else its "cwd" (each when a non-empty
// string), else a shell action's cwd, else the empty string. The action column holds
// the action review, the action under its "action" key.
const sqlProject = `(CASE
	WHEN json_type(metadata, '$.project') = 'text' AND json_extract(metadata, '$.project') <> '' THEN json_extract(metadata, '$.project')
	WHEN json_type(metadata, '$.cwd') = 'text' AND json_extract(metadata, '$.cwd') <> '' THEN json_extract(metadata, '$.cwd')
	WHEN json_extract(action, '$.action.kind') = 'shell' AND json_type(action, '$.action.input.cwd') = 'text' THEN json_extract(action, '$.action.input.cwd')
	ELSE '' END)`
