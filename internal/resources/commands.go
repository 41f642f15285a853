package resources

// Command sources, as get_commands reports them.
const (
	SourceExtension = "extension"
	SourcePrompt    = "prompt"
	SourceSkill     = "skill"
)

// Origins of a resource in pi 1.5's sourceInfo.
const (
	OriginTopLevel = "top-level" // found in a resource directory or given by path
	OriginPackage  = "package"   // came with an installed package
)

// SourceLocal is sourceInfo.source for resources that are plain files on
// disk (not from a package).
const SourceLocal = "local"

// SourceInfo is pi 1.5's description of where a command comes from.
type SourceInfo struct {
	Path    string `json:"path"`
	Source  string `json:"source"`
	Scope   Scope  `json:"scope"`
	Origin  string `json:"origin"`
	BaseDir string `json:"baseDir,omitempty"`
}

// CommandInfo is one get_commands item. It carries both pi 1.5's sourceInfo
// and the older location/path (pi 0.50–0.61, and the forks that kept them),
// so clients of either kind work. JSON key order: name, description, source,
// sourceInfo, location, path.
type CommandInfo struct {
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Source      string     `json:"source"`
	SourceInfo  SourceInfo `json:"sourceInfo"`
	Location    string     `json:"location,omitempty"`
	Path        string     `json:"path,omitempty"`
}

// NewCommandInfo builds an item with both forms of the origin filled in.
// Extension commands use source SourceExtension, the extension's path and
// its scope (ScopeTemporary for -e paths and built-ins).
func NewCommandInfo(name, description, source, path string, scope Scope, baseDir string) CommandInfo {
	return CommandInfo{
		Name:        name,
		Description: description,
		Source:      source,
		SourceInfo: SourceInfo{
			Path:    path,
			Source:  SourceLocal,
			Scope:   scope,
			Origin:  OriginTopLevel,
			BaseDir: baseDir,
		},
		Location: scope.Location(),
		Path:     path,
	}
}

// Commands lists templates (source "prompt", named after the file) and
// skills (source "skill", named "skill:<name>", sourceInfo.baseDir the
// skill's directory), in that order. Extension commands come before these in
// get_commands; the caller prepends them. Never nil.
func Commands(templates Templates, skills Skills) []CommandInfo {
	out := make([]CommandInfo, 0, len(templates)+len(skills))
	for _, t := range templates {
		out = append(out, NewCommandInfo(t.Name, t.Description, SourcePrompt, t.Path, t.Scope, ""))
	}
	for _, s := range skills {
		out = append(out, NewCommandInfo("skill:"+s.Name, s.Description, SourceSkill, s.Path, s.Scope, s.BaseDir))
	}
	return out
}
