package ai

import "math/rand"

// SetReflectOnly switches the MarshalJSON methods to the reflective
// encoders (for tests of wrappers in other packages).
func SetReflectOnly(b bool) { reflectOnly.Store(b) }

// RandomUpdate returns random values for a message_update event.
func RandomUpdate(r *rand.Rand, bad bool) (AssistantEvent, *Usage, *AssistantMessage) {
	g := randGen{r}
	var partial *AssistantMessage
	if r.Intn(2) == 0 {
		partial = g.assistant(bad)
	}
	u := g.usage(bad)
	if r.Intn(8) == 0 {
		return g.event(bad), nil, partial // written as zero usage
	}
	return g.event(bad), &u, partial
}
