package links

import "strings"

// Defang writes a URL so that no renderer or reader's click follows it, as
// threat-intelligence reports write them: "https://evil.example/x" becomes
// "hxxps://evil[.]example/x", "javascript:alert(1)" "javascript[:]alert(1)".
// Every dot of the host is bracketed, so a bare name ("evil.example") is
// defanged too.
func Defang(u string) string {
	scheme, rest, ok := strings.Cut(u, ":")
	if !ok || strings.ContainsAny(scheme, "/.[ ") {
		scheme, rest = "", u
	}
	ls := strings.ToLower(scheme)
	switch {
	case scheme == "":
	case ls == "http" || ls == "https":
		scheme = "hxxp" + scheme[4:] + ":"
	case ls == "ftp" || ls == "ftps":
		scheme = "fxp" + scheme[3:] + ":"
	default:
		scheme += "[:]"
	}
	slashes := len(rest) - len(strings.TrimLeft(rest, "/"))
	if scheme != "" && slashes == 0 {
		return scheme + rest // javascript:…, data:…: no host
	}
	host, path, hasPath := strings.Cut(rest[slashes:], "/")
	host = strings.ReplaceAll(host, ".", "[.]")
	if hasPath {
		path = "/" + path
	}
	return scheme + rest[:slashes] + host + path
}
