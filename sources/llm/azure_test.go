package llm

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestAzureOpenAI: each way of naming an Azure OpenAI resource reaches the
// path, api-version and api-key header Azure checks (a loopback resource
// that answers as Azure does): the resource's address with the deployment
// as the model, the deployment's address as the portal shows it (its
// api-version kept), the v1 API, and provider "azure" for a host that is
// not *.openai.azure.com.
func TestAzureOpenAI(t *testing.T) {
	rows := []struct {
		name, base, model, version string
		path, wantVersion          string
	}{
		{name: "resource address, deployment as the model", base: "/", model: "muse-gpt4o",
			path: "/openai/deployments/muse-gpt4o/chat/completions", wantVersion: DefaultAzureAPIVersion},
		{name: "deployment address pasted with its api-version", base: "/openai/deployments/muse-gpt4o/chat/completions?api-version=2024-06-01",
			path: "/openai/deployments/muse-gpt4o/chat/completions", wantVersion: "2024-06-01"},
		{name: "azure_api_version over the URL's", base: "/openai/deployments/muse-gpt4o?api-version=2024-06-01", version: "2024-10-21",
			path: "/openai/deployments/muse-gpt4o/chat/completions", wantVersion: "2024-10-21"},
		{name: "v1 API", base: "/openai/v1/", model: "muse-gpt4o", path: "/openai/v1/chat/completions"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			az := &llmtest.Azure{Key: "azure-key-1", Deployments: []string{"muse-gpt4o"}, Text: "This post is missing context."}
			srv := httptest.NewServer(az)
			defer srv.Close()
			c, err := New(Config{BaseURL: srv.URL + row.base, APIKey: "azure-key-1", Model: row.model, Provider: "azure",
				AzureAPIVersion: row.version, MaxRetries: -1})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(context.Background(), Request{Messages: userMsg("hi")})
			if err != nil {
				t.Fatalf("%v (requests %+v)", err, az.Requests())
			}
			if resp.Text != "This post is missing context." {
				t.Errorf("text %q", resp.Text)
			}
			got := az.Requests()
			if len(got) != 1 || got[0].Path != row.path || got[0].APIVersion != row.wantVersion {
				t.Errorf("requests %+v, want one to %s with api-version %q", got, row.path, row.wantVersion)
			}
		})
	}
}

// TestAzureRejectsWhatOpenAIWouldSend: the loopback resource turns down
// what muse sent Azure before it knew the dialect (the key as a bearer
// token, api-version before the path) as Azure does, and the error names
// Azure and says how to set it up, not "should end in /v1".
func TestAzureRejectsWhatOpenAIWouldSend(t *testing.T) {
	az := &llmtest.Azure{Key: "azure-key-1", Deployments: []string{"muse-gpt4o"}, Text: "ok"}
	srv := httptest.NewServer(az)
	defer srv.Close()
	plain, err := New(Config{BaseURL: srv.URL + "/openai/deployments/muse-gpt4o?api-version=2024-06-01", APIKey: "azure-key-1", Model: "muse-gpt4o", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = plain.Complete(context.Background(), Request{Messages: userMsg("hi")})
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(ae.Message, "Access denied") {
		t.Fatalf("a bearer-only request: %v, want Azure's 401", err)
	}

	c, err := New(Config{BaseURL: srv.URL, APIKey: "azure-key-1", Model: "gpt-4o", Provider: "azure", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if !errors.As(err, &ae) || !errors.Is(err, ErrModelNotFound) || ae.Provider != "Azure" || !strings.Contains(ae.Advice, "deployment") {
		t.Fatalf("an unknown deployment: %v, want ErrModelNotFound naming the deployment", err)
	}
	c, _ = New(Config{BaseURL: srv.URL, APIKey: "azure-key-1", Model: "muse-gpt4o", Provider: "azure", AzureAPIVersion: "2019-01-01", MaxRetries: -1})
	_, err = c.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if !errors.As(err, &ae) || ae.Status != 404 || strings.Contains(ae.Advice, "should end in") || !strings.Contains(ae.Advice, "azure_api_version") {
		t.Fatalf("an unknown api-version: %v, want advice on the deployment and azure_api_version", err)
	}
	c, _ = New(Config{BaseURL: srv.URL, APIKey: "wrong", Model: "muse-gpt4o", Provider: "azure", MaxRetries: -1})
	_, err = c.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "api-key") {
		t.Fatalf("a wrong key: %v, want ErrAuth saying the key goes as api-key", err)
	}
	if _, err := New(Config{BaseURL: "https://newsroom.openai.azure.com/openai/v1", Model: "m"}); err == nil || !strings.Contains(err.Error(), "api-key") {
		t.Errorf("Azure without a key: %v", err)
	}
}
