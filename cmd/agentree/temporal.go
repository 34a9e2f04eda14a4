package main

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
)

// temporalOptions are the Temporal client options by the ecosystem's
// convention (go.temporal.io/sdk/contrib/envconfig): a profile of the TOML
// file in $TEMPORAL_CONFIG_FILE (default ~/.config/temporalio/temporal.toml,
// profile $TEMPORAL_PROFILE) with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
// TEMPORAL_API_KEY and TEMPORAL_TLS* on top, so a worker or gateway points
// at Temporal Cloud or a TLS cluster without code. namespace, when not
// empty, overrides theirs; with none anywhere it is "default".
func temporalOptions(namespace string) (client.Options, error) {
	opts, err := envconfig.LoadDefaultClientOptions()
	if err != nil {
		return client.Options{}, fmt.Errorf("temporal configuration: %w", err)
	}
	if opts.HostPort == "" {
		// The SDK would quietly dial localhost: say what is missing instead.
		return client.Options{}, errors.New("no Temporal address: set TEMPORAL_ADDRESS (make up; eval \"$(make -s env)\") or a profile in $TEMPORAL_CONFIG_FILE")
	}
	if namespace != "" {
		opts.Namespace = namespace
	}
	if opts.Namespace == "" {
		opts.Namespace = "default"
	}
	return opts, nil
}
