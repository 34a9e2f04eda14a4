// Command starter runs the A2A sample through the two deployments' REST
// APIs: it exposes the specialist's definition over A2A, gives the lead
// its question and streams the lead, which asks the specialist.
package main

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/agentree/agentree/samples/a2a"
	"github.com/agentree/agentree/samples/internal/sampleenv"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	specialist, err := sampleenv.Connect(ctx, a2a.SpecialistTaskQueue)
	if err != nil {
		log.Fatalln(err)
	}
	lead, err := sampleenv.Connect(ctx, a2a.TaskQueue)
	if err != nil {
		log.Fatalln(err)
	}
	if _, err := a2a.Run(ctx, specialist, lead, os.Stdout); err != nil {
		log.Fatalln(err)
	}
}
