package setup

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"
)

// ConfigTemplate is the commented config.toml `muse config init` writes:
// every key, commented out, with its environment variable.
//
//go:embed config_template.toml
var ConfigTemplate string

// WriteTemplate writes ConfigTemplate to path, creating its folder; an
// existing file is kept unless force.
func WriteTemplate(path string, force bool) error {
	if !force {
		if _, err := os.Stat(path); err == nil {
			return fmt.Errorf("%s exists; keep it, or write over it with --force", path)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	if err := os.WriteFile(path, []byte(ConfigTemplate), 0o600); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// Setting is one configuration key as `muse config show` prints it.
type Setting struct {
	Key    string `json:"key"`
	Env    string `json:"env,omitempty"`
	Value  string `json:"value"`
	Origin string `json:"origin"` // flag, env, file or default
}

// Settings lists every configuration key in the config file's order, with
// its value in effect (secrets and URL passwords masked) and where the
// value came from.
func (c *Config) Settings() []Setting {
	var out []Setting
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		key := sf.Tag.Get("toml")
		if key == "" || key == "-" {
			continue
		}
		s := Setting{Key: key, Env: sf.Tag.Get("env"), Value: showValue(v.Field(i), sf.Tag.Get("secret") == "true"),
			Origin: c.Origins[key]}
		if s.Origin == "" {
			s.Origin = "default"
		}
		out = append(out, s)
	}
	return out
}

// Keys are the config file's keys, in order (for the README's table test).
func Keys() []string {
	var out []string
	for _, s := range (&Config{}).Settings() {
		out = append(out, s.Key)
	}
	return out
}

func showValue(f reflect.Value, secret bool) string {
	switch {
	case secret:
		return mask(f.String())
	case f.Type() == reflect.TypeFor[time.Duration]():
		if f.Int() == 0 {
			return ""
		}
		return time.Duration(f.Int()).String()
	case f.Kind() == reflect.String:
		return maskURL(f.String())
	case f.Kind() == reflect.Map:
		var parts []string
		for _, k := range f.MapKeys() {
			parts = append(parts, fmt.Sprintf("%s=%v", k, f.MapIndex(k)))
		}
		slices.Sort(parts)
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(f.Interface())
}

// mask shows that a secret is set without showing it.
func mask(s string) string {
	if s == "" {
		return ""
	}
	return "**** (set)"
}

// SetFlag records that a flag set key (for `muse config show`).
func (c *Config) SetFlag(key string) { c.Origins[key] = "flag" }
