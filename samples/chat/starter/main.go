// Command starter holds a three-message chat with the chat sample's agent
// through the REST API, prints the conversation as the API lists it, and
// cancels the execution (a multi-turn chat otherwise waits for its next
// message for ever).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/samples/chat"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	api, err := sampleenv.Connect(ctx, chat.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}

	ex, err := chat.Converse(ctx, api, chat.Config(), chat.Messages, os.Stdout)
	if err != nil {
		log.Fatalln(err)
	}
	msgs, err := sampleenv.Conversation(ctx, api, ex.GetId())
	if err != nil {
		log.Fatalln(err)
	}
	fmt.Printf("\nexecution %s is %s at checkpoint %d; its conversation (GET …/messages):\n", ex.GetId(), ex.GetStatus(), ex.GetCurrentCheckpointSeq())
	sampleenv.Fprint(os.Stdout, msgs)

	if err := sampleenv.Cancel(ctx, api, ex.GetId()); err != nil {
		log.Fatalln("Unable to cancel", err)
	}
	ex, err = sampleenv.Await(ctx, api, ex.GetId(), sampleenv.Ended)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.GetStatus() != "CANCELLED" {
		log.Fatalf("execution ended %s, not CANCELLED", ex.GetStatus())
	}
	fmt.Println("\ncancelled")
}
