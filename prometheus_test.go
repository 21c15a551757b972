package seckill_test

import (
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v4"
)

type promConfig struct {
	RuleFiles     []string `yaml:"rule_files"`
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		FileSDConfigs []struct {
			Files []string `yaml:"files"`
		} `yaml:"file_sd_configs"`
	} `yaml:"scrape_configs"`
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestPrometheusHostsExample: the file-based example for instances on plain
// hosts scrapes the same job and loads the same rules as the compose one,
// and its discovery files match the example targets, which parse as
// Prometheus's file_sd format (promtool checks the rest where installed).
// Can fail: a job renamed in one file only, a glob that matches no file, a
// targets file Prometheus cannot read.
func TestPrometheusHostsExample(t *testing.T) {
	var compose, hosts promConfig
	readYAML(t, "deploy/prometheus/prometheus.yml", &compose)
	readYAML(t, "deploy/prometheus/prometheus-hosts.yml", &hosts)
	if len(hosts.ScrapeConfigs) != 1 || len(compose.ScrapeConfigs) != 1 {
		t.Fatalf("want one scrape config in each file, have %d (hosts) and %d (compose)", len(hosts.ScrapeConfigs), len(compose.ScrapeConfigs))
	}
	h, c := hosts.ScrapeConfigs[0], compose.ScrapeConfigs[0]
	if h.JobName != c.JobName || h.MetricsPath != c.MetricsPath {
		t.Errorf("prometheus-hosts.yml scrapes job %q at %q, prometheus.yml job %q at %q: the dashboard and rules expect one job", h.JobName, h.MetricsPath, c.JobName, c.MetricsPath)
	}
	if len(hosts.RuleFiles) != 1 || hosts.RuleFiles[0] != compose.RuleFiles[0] {
		t.Errorf("prometheus-hosts.yml loads rules %v, prometheus.yml %v", hosts.RuleFiles, compose.RuleFiles)
	}
	if len(h.FileSDConfigs) == 0 {
		t.Fatal("prometheus-hosts.yml: no file_sd_configs")
	}
	for _, sd := range h.FileSDConfigs {
		for _, glob := range sd.Files {
			matches, err := filepath.Glob(filepath.Join("deploy/prometheus", glob))
			if err != nil || len(matches) == 0 {
				t.Errorf("prometheus-hosts.yml: file_sd glob %q matches no file next to it (%v)", glob, err)
			}
			for _, m := range matches {
				var groups []struct {
					Targets []string          `yaml:"targets"`
					Labels  map[string]string `yaml:"labels"`
				}
				readYAML(t, m, &groups)
				if len(groups) == 0 || len(groups[0].Targets) == 0 {
					t.Errorf("%s: no target group with targets", m)
				}
			}
		}
	}
}
