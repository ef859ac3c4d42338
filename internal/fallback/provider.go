package fallback

import "github.com/sluice-gw/sluice/internal/llm"

// Provider calls one upstream (llm.Provider, where the contract is written). The chain passes
// a target's Timeouts.Connect to it in the attempt's context (llm.WithConnectTimeout).
type Provider = llm.Provider
