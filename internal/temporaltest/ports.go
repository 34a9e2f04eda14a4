package temporaltest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
)

// ServerPorts is how many consecutive ports the Temporal server that
// `AGENTREE_TEMPORAL=server scripts/services.sh` runs takes, from its
// frontend's (AGENTREE_TEMPORAL_PORT) up (services.sh server_port).
const ServerPorts = 9

// FreeServerPorts is the first of ServerPorts consecutive ports no one
// listens on, below 32768: the server records its membership ports in a
// smallint column (and the kernel hands out ports from 32768 up, so no
// port it gives away is taken from under the server).
func FreeServerPorts() (int, error) {
	for range 100 {
		first := 20000 + rand.IntN(32768-ServerPorts-20000)
		var held []net.Listener
		for p := first; p < first+ServerPorts; p++ {
			l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				break
			}
			held = append(held, l)
		}
		for _, l := range held {
			l.Close()
		}
		if len(held) == ServerPorts {
			return first, nil
		}
	}
	return 0, fmt.Errorf("temporaltest: no %d consecutive free ports below 32768", ServerPorts)
}
