// Command starter holds a three-message chat with the chat sample's agent,
// prints the conversation as Postgres holds it, and cancels the execution
// (a multi-turn chat otherwise waits for its next message for ever).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/entrystore"
	"github.com/agentree/agentree/samples/chat"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := sampleenv.Connect(ctx)
	if err != nil {
		log.Fatalln(err)
	}
	defer conn.Close()

	ac := conn.Agentree(chat.TaskQueue)
	ex, err := chat.Converse(ctx, ac, conn.Store, conn.Org.ID, chat.Config(), chat.Messages, os.Stdout)
	if err != nil {
		log.Fatalln(err)
	}
	msgs, err := sampleenv.ConversationOf(ctx, conn.Store, ex)
	if err != nil {
		log.Fatalln(err)
	}
	fmt.Printf("\nexecution %s is %s at checkpoint %d; its conversation in Postgres:\n", ex.ID, ex.Status, ex.CheckpointSeq)
	sampleenv.Fprint(os.Stdout, msgs)

	if _, err := ac.Cancel(ctx, conn.Org.ID, ex.ID); err != nil {
		log.Fatalln("Unable to cancel", err)
	}
	ex, err = sampleenv.Await(ctx, conn.Store, conn.Org.ID, ex.ID, sampleenv.Ended)
	if err != nil {
		log.Fatalln(err)
	}
	if ex.Status != entrystore.StatusCancelled {
		log.Fatalf("execution ended %s, not CANCELLED", ex.Status)
	}
	fmt.Println("\ncancelled")
}
