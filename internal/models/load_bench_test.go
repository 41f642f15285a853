package models

import "testing"

// BenchmarkLoad is a start-up's use of the registry: the catalogue and an
// empty agent dir loaded, one provider-qualified model resolved.
func BenchmarkLoad(b *testing.B) {
	p, _ := adapters(allAPIs...)
	env := envOf(nil)
	b.ReportAllocs()
	for b.Loop() {
		reg, _ := Load(LoadOptions{Providers: p, Env: env})
		if _, err := reg.Resolve("", "anthropic/claude-sonnet-4-6"); err != nil {
			b.Fatal(err)
		}
	}
}
