package usage

// builtin is the price table of common models, USD per million tokens, from the providers'
// public pricing pages (issue 46): OpenAI's cached input as listed per model, and no charge
// for writing its cache (CacheWrite is the input price); Anthropic's cache reads at 0.1,
// 5-minute writes at 1.25 and 1-hour writes at 2 times the input price (Bedrock and Vertex
// charge Claude the same, and Bedrock's ids resolve to these names in Lookup); Gemini's
// cached input (implicit or explicit caching) at the rate for prompts up to 200k tokens,
// without the hourly storage of an explicit cache, which is no call's. A model with no cache
// rate here (embeddings, models without caching) has its cache tokens priced at the input
// price (Price.rates). Prices change: the configuration's prices: block overrides any of
// them, and adds the models not listed here.
var builtin = map[string]Price{
	// OpenAI
	"gpt-5":                  {Input: 1.25, Output: 10, CachedInput: 0.125, CacheWrite: 1.25},
	"gpt-5-mini":             {Input: 0.25, Output: 2, CachedInput: 0.025, CacheWrite: 0.25},
	"gpt-5-nano":             {Input: 0.05, Output: 0.40, CachedInput: 0.005, CacheWrite: 0.05},
	"gpt-4.1":                {Input: 2, Output: 8, CachedInput: 0.50, CacheWrite: 2},
	"gpt-4.1-mini":           {Input: 0.40, Output: 1.60, CachedInput: 0.10, CacheWrite: 0.40},
	"gpt-4.1-nano":           {Input: 0.10, Output: 0.40, CachedInput: 0.025, CacheWrite: 0.10},
	"gpt-4o":                 {Input: 2.50, Output: 10, CachedInput: 1.25, CacheWrite: 2.50},
	"gpt-4o-mini":            {Input: 0.15, Output: 0.60, CachedInput: 0.075, CacheWrite: 0.15},
	"gpt-4-turbo":            {Input: 10, Output: 30, CachedInput: 10, CacheWrite: 10},
	"gpt-3.5-turbo":          {Input: 0.50, Output: 1.50, CachedInput: 0.50, CacheWrite: 0.50},
	"o1":                     {Input: 15, Output: 60, CachedInput: 7.50, CacheWrite: 15},
	"o3":                     {Input: 2, Output: 8, CachedInput: 0.50, CacheWrite: 2},
	"o3-mini":                {Input: 1.10, Output: 4.40, CachedInput: 0.55, CacheWrite: 1.10},
	"o4-mini":                {Input: 1.10, Output: 4.40, CachedInput: 0.275, CacheWrite: 1.10},
	"text-embedding-3-small": {Input: 0.02},
	"text-embedding-3-large": {Input: 0.13},
	"text-embedding-ada-002": {Input: 0.10},
	// Images (per image, the standard 1024x1024 quality; gpt-image-1 bills tokens) and
	// moderations (free).
	"dall-e-3":               {Unit: 0.04},
	"dall-e-2":               {Unit: 0.02},
	"gpt-image-1":            {Input: 5, Output: 40},
	"omni-moderation-latest": {},
	"text-moderation-latest": {},
	// Audio: transcriptions per second of audio, speech per character of input (issue 48;
	// the gpt-4o transcribe and tts models bill tokens).
	"whisper-1": {Unit: 0.0001},
	"tts-1":     {Unit: 0.000015},
	"tts-1-hd":  {Unit: 0.00003},
	// Rerankers, per search unit (Cohere: a query with up to 100 documents).
	"rerank-v3.5":              {Unit: 0.002},
	"rerank-english-v3.0":      {Unit: 0.002},
	"rerank-multilingual-v3.0": {Unit: 0.002},
	// The clouds' rerankers, per query of up to 100 documents (Bedrock's Rerank; Vertex AI's
	// ranking API, whose "@latest" the date rule drops).
	"cohere.rerank-v3-5:0":        {Unit: 0.002},
	"amazon.rerank-v1:0":          {Unit: 0.001},
	"semantic-ranker-default":     {Unit: 0.001},
	"semantic-ranker-default-004": {Unit: 0.001},
	"semantic-ranker-default-003": {Unit: 0.001},
	"semantic-ranker-fast-004":    {Unit: 0.001},
	"semantic-ranker-512":         {Unit: 0.001},
	"semantic-ranker-512-003":     {Unit: 0.001},
	// The clouds' image models, per image at 1024x1024 standard quality (Bedrock's
	// InvokeModel, Vertex AI's Imagen; issue 48): list prices as last seen, unconfirmed.
	"amazon.nova-canvas-v1:0":           {Unit: 0.04},
	"amazon.titan-image-generator-v2:0": {Unit: 0.01},
	"amazon.titan-image-generator-v1":   {Unit: 0.01},
	"imagen-3.0-generate-002":           {Unit: 0.04},
	"imagen-3.0-generate-001":           {Unit: 0.04},
	"imagen-3.0-fast-generate-001":      {Unit: 0.02},
	"imagen-4.0-generate-001":           {Unit: 0.04},
	"imagen-4.0-fast-generate-001":      {Unit: 0.02},
	"imagen-4.0-ultra-generate-001":     {Unit: 0.06},
	// The clouds' embedding models that report tokens, per million (Titan on Bedrock,
	// gemini-embedding on Vertex AI).
	"amazon.titan-embed-text-v2:0": {Input: 0.02},
	"amazon.titan-embed-text-v1":   {Input: 0.10},
	"gemini-embedding-001":         {Input: 0.15},
	// Voyage, per million tokens (rerankers: query tokens times documents plus the
	// documents' tokens, as usage.total_tokens reports them).
	"rerank-2.5":      {Input: 0.05},
	"rerank-2.5-lite": {Input: 0.02},
	"voyage-3.5":      {Input: 0.06},
	"voyage-3.5-lite": {Input: 0.02},
	"voyage-3-large":  {Input: 0.18},
	// Anthropic
	"claude-opus-4-5":   {Input: 5, Output: 25, CachedInput: 0.50, CacheWrite: 6.25, CacheWrite1h: 10},
	"claude-opus-4-1":   {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75, CacheWrite1h: 30},
	"claude-opus-4-0":   {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75, CacheWrite1h: 30},
	"claude-opus-4":     {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75, CacheWrite1h: 30},
	"claude-sonnet-4-5": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6},
	"claude-sonnet-4-0": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6},
	"claude-sonnet-4":   {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6},
	"claude-3-7-sonnet": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6},
	"claude-3-5-sonnet": {Input: 3, Output: 15, CachedInput: 0.30, CacheWrite: 3.75, CacheWrite1h: 6},
	"claude-haiku-4-5":  {Input: 1, Output: 5, CachedInput: 0.10, CacheWrite: 1.25, CacheWrite1h: 2},
	"claude-3-5-haiku":  {Input: 0.80, Output: 4, CachedInput: 0.08, CacheWrite: 1, CacheWrite1h: 1.6},
	"claude-3-haiku":    {Input: 0.25, Output: 1.25, CachedInput: 0.03, CacheWrite: 0.30, CacheWrite1h: 0.5},
	"claude-3-opus":     {Input: 15, Output: 75, CachedInput: 1.50, CacheWrite: 18.75, CacheWrite1h: 30},
	// Google Gemini (and Vertex's Gemini)
	"gemini-2.5-pro":        {Input: 1.25, Output: 10, CachedInput: 0.125},
	"gemini-2.5-flash":      {Input: 0.30, Output: 2.50, CachedInput: 0.03},
	"gemini-2.5-flash-lite": {Input: 0.10, Output: 0.40, CachedInput: 0.01},
	"gemini-2.0-flash":      {Input: 0.10, Output: 0.40, CachedInput: 0.025},
}
