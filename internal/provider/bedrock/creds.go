package bedrock

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/smithy-go/logging"
)

// ErrNoCredentials is LoadCredentials' answer when no source of AWS credentials is visible
// without the network: the gateway leaves the provider out with a warning, as it does a
// provider without an api_key.
var ErrNoCredentials = errors.New("no AWS credentials: none in the environment, the shared files (profile), web identity or container settings")

// LoadCredentials resolves the AWS default credential chain for region (environment,
// shared config and credentials files with profile, or AWS_PROFILE, web identity, the
// container endpoint, the EC2 instance metadata), as the SDK does, without contacting
// anything: the SDK fetches nothing until the first Retrieve, and the returned provider is
// its cache, which refreshes credentials before they expire. It reports where they come
// from. Since the instance metadata service cannot be seen without calling it, it counts
// only when imds is set; otherwise a chain with no other source is ErrNoCredentials. A named
// profile that does not exist is an error too.
func LoadCredentials(ctx context.Context, region, profile string, imds bool) (aws.CredentialsProvider, string, error) {
	// The SDK's own log (a notice when IMDSv2 falls back to v1, ...) would bypass the
	// gateway's structured log: failures reach it as the call's Auth error instead.
	opts := []func(*config.LoadOptions) error{config.WithRegion(region), config.WithLogger(logging.Nop{})}
	if profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", err
	}
	src := source(cfg.ConfigSources)
	if src == "" && imds {
		src = "instance metadata"
	}
	if src == "" || cfg.Credentials == nil {
		return nil, "", ErrNoCredentials
	}
	return cfg.Credentials, src, nil
}

// source names the first credential source the loaded configuration shows, "" if none.
func source(sources []any) string {
	for _, s := range sources {
		var env *config.EnvConfig
		var shared *config.SharedConfig
		switch c := s.(type) {
		case config.EnvConfig:
			env = &c
		case *config.EnvConfig:
			env = c
		case config.SharedConfig:
			shared = &c
		case *config.SharedConfig:
			shared = c
		}
		switch {
		case env != nil && env.Credentials.HasKeys():
			return "environment"
		case env != nil && env.WebIdentityTokenFilePath != "":
			return "web identity"
		case env != nil && (env.ContainerCredentialsEndpoint != "" || env.ContainerCredentialsRelativePath != ""):
			return "container"
		case shared != nil && (shared.Credentials.HasKeys() || shared.Source != nil || shared.CredentialSource != "" ||
			shared.WebIdentityTokenFile != "" || shared.CredentialProcess != "" || shared.SSOSessionName != "" ||
			shared.SSOStartURL != "" || shared.RoleARN != "" || shared.LoginSession != ""):
			return "profile " + shared.Profile
		}
	}
	return ""
}
