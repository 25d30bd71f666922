package risk

import (
	"path"
	"strings"

	"github.com/hitl-sh/hitl/shell"
)

// wrappers run the command that follows their options: the risk is the
// wrapped command's.
var wrappers = map[string]bool{"env": true, "nohup": true, "time": true, "command": true, "exec": true, "xargs": true, "nice": true, "timeout": true}

// shells read a script from their input when given none.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true}

// shellRisks says what is risky in a command line, read with the shell
// parser: every simple command it may run, in lists, pipelines and
// substitutions. A line that does not parse is read word by word.
func shellRisks(src string) []string {
	var commands [][]string
	if l, err := shell.Parse(src); err == nil {
		for _, c := range l.Commands {
			words := make([]string, len(c))
			for i, w := range c {
				words[i] = w.Text
			}
			commands = append(commands, words)
		}
	} else {
		commands = [][]string{strings.Fields(src)}
	}
	downloads := false
	for _, c := range commands {
		if p := program(c); p == "curl" || p == "wget" {
			downloads = true
		}
	}
	var why []string
	for _, c := range commands {
		why = append(why, commandRisks(c, downloads && strings.Contains(src, "|"))...)
	}
	return why
}

// program is the name of a command's program, without its directory.
func program(words []string) string {
	if len(words) == 0 {
		return ""
	}
	return path.Base(words[0])
}

// commandRisks says what is risky in one simple command; piped is whether
// the line pipes a download somewhere.
func commandRisks(words []string, piped bool) []string {
	var why []string
	for len(words) > 0 {
		switch p := program(words); {
		case p == "sudo" || p == "doas":
			why = append(why, "runs as root ("+p+")")
			words = afterOptions(words[1:])
			continue
		case wrappers[p]:
			words = afterOptions(words[1:])
			continue
		}
		break
	}
	args := []string{}
	if len(words) > 1 {
		args = words[1:]
	}
	switch p := program(words); {
	case p == "rm" && recursive(args):
		if hasShort(args, 'f') || has(args, "--force") {
			why = append(why, "deletes recursively without asking (rm -rf)")
		} else {
			why = append(why, "deletes recursively (rm -r)")
		}
	case shells[p] && piped && readsInput(args):
		why = append(why, "pipes a download into a shell")
	case p == "git" && subcommand(args, gitValued) == "push" && forcePush(args):
		why = append(why, "force-pushes, rewriting the remote's history")
	case p == "terraform" || p == "tofu":
		switch subcommand(args, nil) {
		case "apply":
			why = append(why, "applies infrastructure changes ("+p+" apply)")
		case "destroy":
			why = append(why, "destroys infrastructure ("+p+" destroy)")
		}
	case p == "kubectl" || p == "oc":
		switch sub := subcommand(args, kubectlValued); sub {
		case "delete", "apply", "replace", "patch", "drain":
			why = append(why, "changes a cluster ("+p+" "+sub+")")
		}
	}
	return why
}

// afterOptions skips a wrapper's options (and sudo's -u user and env's
// NAME=value) to the command it runs.
func afterOptions(words []string) []string {
	for len(words) > 0 {
		w := words[0]
		switch {
		case w == "-u" || w == "-g" || w == "-n" && len(words) > 1 && isNumber(words[1]):
			words = words[min(2, len(words)):]
		case strings.HasPrefix(w, "-"), strings.Contains(w, "=") && !strings.HasPrefix(w, "/"), isNumber(w):
			words = words[1:]
		default:
			return words
		}
	}
	return words
}

// isNumber reports whether s is a number or a duration (nice's 10,
// timeout's 5m): a digit first.
func isNumber(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9' && strings.Trim(s, "0123456789.smhd") == ""
}

// recursive reports whether rm's options ask to recurse, in any order or
// grouping: -r, -R, -rf, -fr, -Rf, --recursive.
func recursive(args []string) bool {
	return hasShort(args, 'r') || hasShort(args, 'R') || has(args, "--recursive")
}

// hasShort reports whether a group of short options (-rf) holds o.
func hasShort(args []string, o byte) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.IndexByte(a[1:], o) >= 0 {
			return true
		}
	}
	return false
}

// has reports whether args hold the word w (before a --).
func has(args []string, w string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == w || strings.HasPrefix(a, w+"=") {
			return true
		}
	}
	return false
}

// readsInput reports whether a shell given args reads its script from
// its input: no script file, or -s.
func readsInput(args []string) bool {
	for _, a := range args {
		if a == "-s" {
			return true
		}
		if a == "-c" || !strings.HasPrefix(a, "-") {
			return false
		}
	}
	return true
}

// Options that take a value as the next word, before a subcommand.
var (
	gitValued     = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true, "--namespace": true}
	kubectlValued = map[string]bool{"-n": true, "--namespace": true, "--context": true, "--kubeconfig": true, "--cluster": true, "--user": true, "-s": true, "--server": true, "-l": true, "--selector": true, "-f": true, "--filename": true}
)

// subcommand is the first argument that is neither an option nor the
// value of one in valued.
func subcommand(args []string, valued map[string]bool) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if valued[a] {
			i++
			continue
		}
		if !strings.HasPrefix(a, "-") {
			return a
		}
	}
	return ""
}

// forcePush reports whether git push's arguments force it: -f (alone or
// grouped), --force, --force-with-lease, --force-if-includes, or a
// refspec starting with +.
func forcePush(args []string) bool {
	if hasShort(args, 'f') {
		return true
	}
	for _, a := range args {
		if strings.HasPrefix(a, "--force") || len(a) > 1 && a[0] == '+' {
			return true
		}
	}
	return false
}
