// Command render renders a Helm chart the way `helm template` does, for tests on machines without
// a helm binary. It uses the same engine Helm uses — Go's text/template with Masterminds/sprig —
// plus Helm's own template functions (include, tpl, required, toYaml, fromYaml, toJson, fromJson,
// lookup) and built-in objects (.Values, .Release, .Chart, .Capabilities, .Template, .Files).
// Only what charts/keelson uses is provided; ADR 0502 lists what is and is not covered.
//
// Usage: render CHART_DIR RELEASE_NAME NAMESPACE [VALUES_OVERRIDE.json]
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	yaml "gopkg.in/yaml.v2"
)

type files map[string]string

func (f files) Get(name string) string { return f[name] }

type apiVersions []string

func (a apiVersions) Has(v string) bool {
	for _, x := range a {
		if x == v {
			return true
		}
	}
	return false
}

// toJSONCompatible turns yaml.v2's map[interface{}]interface{} into map[string]interface{}.
func toJSONCompatible(v interface{}) interface{} {
	switch t := v.(type) {
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, val := range t {
			m[fmt.Sprint(k)] = toJSONCompatible(val)
		}
		return m
	case []interface{}:
		for i := range t {
			t[i] = toJSONCompatible(t[i])
		}
		return t
	default:
		return v
	}
}

// coalesce merges override into base as Helm merges -f files: maps deep-merge, null deletes.
func coalesce(base, override map[string]interface{}) map[string]interface{} {
	for k, v := range override {
		if v == nil {
			delete(base, k)
			continue
		}
		if vm, ok := v.(map[string]interface{}); ok {
			if bm, ok := base[k].(map[string]interface{}); ok {
				base[k] = coalesce(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}

func readYAML(path string) map[string]interface{} {
	raw, err := os.ReadFile(path)
	must(err)
	var v interface{}
	must(yaml.Unmarshal(raw, &v))
	if v == nil {
		return map[string]interface{}{}
	}
	return toJSONCompatible(v).(map[string]interface{})
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "render:", err)
		os.Exit(1)
	}
}

func toYAML(v interface{}) string {
	// Helm marshals through JSON (sigs.k8s.io/yaml); a JSON round trip gives the same key order and types.
	raw, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var generic interface{}
	if err := json.Unmarshal(raw, &generic); err != nil {
		return ""
	}
	out, err := yaml.Marshal(generic)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(out), "\n")
}

func main() {
	if len(os.Args) < 4 {
		must(fmt.Errorf("usage: render CHART_DIR RELEASE NAMESPACE [OVERRIDE.json]"))
	}
	chartDir, release, namespace := os.Args[1], os.Args[2], os.Args[3]
	chartMeta := readYAML(filepath.Join(chartDir, "Chart.yaml"))
	values := readYAML(filepath.Join(chartDir, "values.yaml"))
	if len(os.Args) > 4 {
		raw, err := os.ReadFile(os.Args[4])
		must(err)
		var override map[string]interface{}
		must(json.Unmarshal(raw, &override))
		values = coalesce(values, override)
	}
	chartName := fmt.Sprint(chartMeta["name"])
	chart := map[string]interface{}{
		"Name": chartMeta["name"], "Version": chartMeta["version"], "AppVersion": chartMeta["appVersion"],
		"Description": chartMeta["description"], "Type": chartMeta["type"],
	}

	all := files{}
	var templates []string
	must(filepath.Walk(chartDir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(chartDir, path)
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		all[rel] = string(raw)
		if strings.HasPrefix(rel, "templates/") {
			templates = append(templates, rel)
		}
		return nil
	}))
	sort.Strings(templates)

	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	root := template.New("root")
	funcs["toYaml"] = toYAML
	funcs["toJson"] = func(v interface{}) string { b, _ := json.Marshal(v); return string(b) }
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		var v interface{}
		if err := yaml.Unmarshal([]byte(s), &v); err != nil {
			return map[string]interface{}{"Error": err.Error()}
		}
		m, _ := toJSONCompatible(v).(map[string]interface{})
		return m
	}
	funcs["fromJson"] = func(s string) map[string]interface{} {
		m := map[string]interface{}{}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			m["Error"] = err.Error()
		}
		return m
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return v, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["lookup"] = func(string, string, string, string) map[string]interface{} { return map[string]interface{}{} }
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := root.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = t.Execute(&buf, data)
		return buf.String(), err
	}
	root.Funcs(funcs).Option("missingkey=zero")
	for _, name := range templates {
		_, err := root.New(chartName + "/" + name).Parse(all[name])
		must(err)
	}

	var out strings.Builder
	for _, name := range templates {
		base := filepath.Base(name)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, ".txt") {
			continue
		}
		full := chartName + "/" + name
		data := map[string]interface{}{
			"Values":  values,
			"Release": map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true, "IsUpgrade": false, "Revision": 1},
			"Chart":   chart,
			"Capabilities": map[string]interface{}{
				"KubeVersion": map[string]interface{}{"Version": "v1.32.0", "Major": "1", "Minor": "32"},
				"APIVersions": apiVersions{"v1", "apps/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "coordination.k8s.io/v1", "apiextensions.k8s.io/v1"},
			},
			"Template": map[string]interface{}{"Name": full, "BasePath": chartName + "/templates"},
			"Files":    all,
		}
		var buf bytes.Buffer
		must(root.ExecuteTemplate(&buf, full, data))
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.TrimSpace(text) == "" {
			continue
		}
		out.WriteString("---\n# Source: " + full + "\n" + strings.TrimLeft(text, "\n"))
		if !strings.HasSuffix(text, "\n") {
			out.WriteString("\n")
		}
	}
	fmt.Print(out.String())
}
