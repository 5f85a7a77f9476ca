package llm

import (
	"cmp"
	"net/url"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultAzureAPIVersion is the api-version sent to an Azure OpenAI
// deployment URL when neither the setting nor the URL names one: the
// newest generally available version of Azure's data-plane API.
const DefaultAzureAPIVersion = "2024-10-21"

// azureTarget is what an Azure OpenAI base URL says. Azure has two APIs:
//
//   - the deployment API: https://RES.openai.azure.com/openai/deployments/DEP/chat/completions?api-version=V,
//     with the resource's key in the api-key header (go-openai's
//     DefaultAzureConfig builds these URLs from the resource's address);
//   - the v1 API: https://RES.openai.azure.com/openai/v1/chat/completions,
//     OpenAI's paths under /openai/v1, the key in the api-key header too.
//
// A user may paste any of: the resource's address, the deployment's
// address (with or without /chat/completions and its api-version), or the
// v1 address.
type azureTarget struct {
	on bool
	// v1 is true for the /openai/v1 API.
	v1 bool
	// root is scheme://host (the deployment API); base is what
	// Config.BaseURL becomes: root+"/openai", or the v1 address.
	root, base string
	// deployment named in the URL ("" when none); version is the
	// api-version to send ("" for the v1 API unless the URL has one).
	deployment, version string
}

func azureConfig(cfg Config, u *url.URL) azureTarget {
	az := azureTarget{on: true, root: u.Scheme + "://" + u.Host}
	path := strings.TrimRight(u.Path, "/")
	query := u.Query().Get("api-version")
	if i := strings.Index(path, "/openai/v1"); i >= 0 {
		az.v1 = true
		az.base = az.root + path[:i] + "/openai/v1"
		az.version = cmp.Or(cfg.AzureAPIVersion, query)
		return az
	}
	if _, rest, ok := strings.Cut(path, "/openai/deployments/"); ok {
		az.deployment, _, _ = strings.Cut(rest, "/")
	}
	az.base = az.root + "/openai"
	az.version = cmp.Or(cfg.AzureAPIVersion, query, DefaultAzureAPIVersion)
	return az
}

// clientConfig is go-openai's configuration for the target. model is the
// client's chat model: when the URL names a deployment, that model is
// sent to it, and any other model (a per-task one) to the deployment of
// its own name.
func (az azureTarget) clientConfig(key, model string) openai.ClientConfig {
	if az.v1 {
		oc := openai.DefaultConfig(key)
		oc.BaseURL = az.base
		oc.APIVersion = az.version
		return oc
	}
	oc := openai.DefaultAzureConfig(key, az.root)
	oc.APIVersion = az.version
	oc.AzureModelMapperFunc = func(m string) string {
		if az.deployment != "" && m == model {
			return az.deployment
		}
		return m
	}
	return oc
}
