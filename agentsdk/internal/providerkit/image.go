package providerkit

import (
	"encoding/base64"
	"net/http"

	"github.com/agentree/agentree/agentsdk"
)

// InlineImage is an image with data as both APIs take it inline: its media
// type (its own, else sniffed from the data, since the APIs refuse an image
// without one) and its data in standard base64.
func InlineImage(img *agentsdk.Image) (mediaType, data string) {
	mediaType = img.MediaType
	if mediaType == "" {
		mediaType = http.DetectContentType(img.Data)
	}
	return mediaType, base64.StdEncoding.EncodeToString(img.Data)
}
