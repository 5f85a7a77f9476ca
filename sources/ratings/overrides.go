package ratings

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/tomlguard"
)

// Override is the newsroom's own decision about one domain, kept in the
// overrides file (TOML, by default $XDG_CONFIG_HOME/muse/overrides.toml):
//
//	[domains."example.com"]
//	boost = true
//
//	[domains."tabloid.example"]
//	drop = true
//	note = "ran fabricated quotes in 2025"
//
//	[domains."local-paper.example"]
//	factuality = "high"
//	bias = "least biased"
//	publisher = "Local Paper"
//
// It wins over every other source of ratings.
type Override struct {
	// Boost vouches for the domain: tier high, whatever else says.
	Boost bool `toml:"boost,omitempty"`
	// Drop keeps the domain out of references: tier excluded.
	Drop bool `toml:"drop,omitempty"`
	// Factuality and Bias rate the domain (any spelling NormalizeFactuality
	// and NormalizeBias accept); the tier follows from them. One of them may
	// be left empty to keep the other source's value.
	Factuality string `toml:"factuality,omitempty"`
	Bias       string `toml:"bias,omitempty"`
	// Publisher names the publisher shown for the domain.
	Publisher string `toml:"publisher,omitempty"`
	// Note says why, for the people who edit the file.
	Note string `toml:"note,omitempty"`
}

func (o Override) isZero() bool { return o == Override{} }

// normalize validates an override and spells its values in display form.
func (o Override) normalize() (Override, error) {
	if o.Boost && o.Drop {
		return o, errors.New("boost and drop both set")
	}
	var err error
	if o.Factuality, err = NormalizeFactuality(o.Factuality); err != nil {
		return o, err
	}
	if o.Bias, err = NormalizeBias(o.Bias); err != nil {
		return o, err
	}
	return o, nil
}

// overridesFile is the TOML document.
type overridesFile struct {
	Domains map[string]Override `toml:"domains"`
}

// overrides is a loaded overrides file, keyed like a table.
type overrides struct {
	path string
	t    *table              // for lookup; entries carry no rating of their own
	byK  map[string]Override // by normalized key ("example.com", "al.com/birmingham")
}

// maxOverridesBytes is the largest overrides file read: some hundred
// thousand domains.
const maxOverridesBytes = 16 << 20

// readOverrides decodes an overrides file; a missing file is empty.
func readOverrides(path string) (overridesFile, error) {
	var f overridesFile
	b, err := tomlguard.ReadFile(path, maxOverridesBytes)
	if err == nil {
		_, err = toml.Decode(string(b), &f)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return overridesFile{Domains: map[string]Override{}}, nil
		}
		return f, fmt.Errorf("read overrides file %s: %w", path, err)
	}
	if f.Domains == nil {
		f.Domains = map[string]Override{}
	}
	return f, nil
}

func loadOverrides(path string) (*overrides, error) {
	f, err := readOverrides(path)
	if err != nil {
		return nil, err
	}
	ov := &overrides{path: path, t: newTable("overrides file"), byK: map[string]Override{}}
	for d, o := range f.Domains {
		o, err := o.normalize()
		if err == nil {
			err = ov.t.add(d, entry{})
		}
		if err != nil {
			return nil, fmt.Errorf("overrides file %s: domain %q: %w", path, d, err)
		}
		host, p, _ := splitKey(d)
		ov.byK[host+p] = o
	}
	return ov, nil
}

func (ov *overrides) lookup(host, path string) (string, Override, bool) {
	if ov == nil {
		return "", Override{}, false
	}
	key, _, ok := ov.t.lookup(host, path)
	if !ok {
		return "", Override{}, false
	}
	return key, ov.byK[key], true
}

// SetOverride records the newsroom's decision about a domain, a
// "host/path" prefix, or the host of a full URL ("https://…/story" sets the
// host's entry) in the overrides file at path, creating the file and its
// folder when needed; a zero Override removes the domain's entry. The file
// is replaced atomically (written to a temporary file, then renamed), so a
// reader never sees half of it.
func SetOverride(path, domain string, o Override) error {
	key := domain
	if strings.Contains(key, "://") {
		key = sources.HostOf(key)
	}
	host, p, err := splitKey(key)
	if err != nil {
		return fmt.Errorf("set override: %w", err)
	}
	if o, err = o.normalize(); err != nil {
		return fmt.Errorf("set override for %s: %w", domain, err)
	}
	f, err := readOverrides(path)
	if err != nil {
		return fmt.Errorf("set override for %s: %w", domain, err)
	}
	for k := range f.Domains { // one entry per normalized key, whatever its spelling
		if kh, kp, err := splitKey(k); err == nil && kh+kp == host+p {
			delete(f.Domains, k)
		}
	}
	if !o.isZero() {
		f.Domains[host+p] = o
	}
	var buf bytes.Buffer
	buf.WriteString("# muse overrides: the newsroom's own publisher decisions (boost, drop or rate).\n" +
		"# They win over every ratings file and the built-in table.\n\n")
	if err := encodeOverrides(&buf, f); err != nil {
		return fmt.Errorf("set override for %s: %w", domain, err)
	}
	if err := writeFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("set override for %s: %w", domain, err)
	}
	return nil
}

// OverrideOf reads the newsroom's decision about domain (a domain, a
// "host/path" prefix or a URL's host, as SetOverride takes it) from the
// overrides file at path: ok is false when the file has none.
func OverrideOf(path, domain string) (Override, bool, error) {
	key := domain
	if strings.Contains(key, "://") {
		key = sources.HostOf(key)
	}
	host, p, err := splitKey(key)
	if err != nil {
		return Override{}, false, err
	}
	f, err := readOverrides(path)
	if err != nil {
		return Override{}, false, err
	}
	for k, o := range f.Domains {
		if kh, kp, err := splitKey(k); err == nil && kh+kp == host+p {
			return o, true, nil
		}
	}
	return Override{}, false, nil
}

// encodeOverrides writes the document; the encoder sorts map keys, so the
// domains come out in order and the file diffs well.
func encodeOverrides(buf *bytes.Buffer, f overridesFile) error {
	return toml.NewEncoder(buf).Encode(f)
}

// writeFileAtomic writes data to a temporary file beside path, syncs it and
// renames it over path.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // harmless after a successful rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
