// Command starter is an OpenAI-SDK program pointed at Agentree: it finds
// the sample worker's gateway, then streams a response through the
// official openai-go SDK with /v1 as its base URL.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/samples/internal/sampleenv"
	openaiclient "github.com/agentree/agentree/samples/openai-client"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Wait for the worker; its gateway's address and key are published
	// where Connect found them.
	if _, err := sampleenv.Connect(ctx, openaiclient.TaskQueue); err != nil {
		log.Fatalln(err)
	}
	gw, err := sampleenv.Published(sampleenv.Dir(), openaiclient.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}

	fmt.Println("you:", openaiclient.Question)
	fmt.Print("agent: ")
	res, err := openaiclient.Stream(ctx, gw.URL+"/v1", gw.Key, openaiclient.Question, os.Stdout, nil)
	if err != nil {
		log.Fatalln(err)
	}
	fmt.Printf("\nresponse %s completed (%d deltas); GET /v1/responses/%s returns it again\n", res.ID, res.Deltas, res.ID)
}
