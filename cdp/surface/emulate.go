package surface

import (
	"context"
	"maps"
	"slices"

	cdproto "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"

	"github.com/webcodex/webcodex/fsm"
)

// MaxViewportSide bounds a side of a resized viewport, in CSS pixels.
const MaxViewportSide = 10000

// Viewport is the size of the page's viewport in CSS pixels.
type Viewport struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Resize sets the page's viewport to v, as Playwright's browser_resize
// does (setViewportSize): the page's layout viewport, through
// Emulation.setDeviceMetricsOverride on this page's session, which lasts
// as long as the session (a detach ends it). The device scale factor and
// the window are left as they are.
func (p *Page) Resize(ctx context.Context, v Viewport) (*ActionResult, error) {
	for _, side := range []struct {
		name string
		n    int
	}{{"width", v.Width}, {"height", v.Height}} {
		if side.n < 1 || side.n > MaxViewportSide {
			return nil, fsm.Refusef(fsm.InvalidArgument, "%s is 1 to %d CSS pixels", side.name, MaxViewportSide)
		}
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	_, err = cdproto.Call(ctx, p.sess, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(v.Width), Height: int64(v.Height),
	})
	if err != nil {
		return nil, p.readErr(ctx, err)
	}
	return &ActionResult{Action: "resize", Viewport: &v}, nil
}

// mediaState is the media overrides set on a page's session: the media
// type ("" none) and the media features by CSS name.
type mediaState struct {
	media    string
	features map[string]string
}

// MediaFeatures are the media features EmulateMedia takes, by CSS name,
// with the values each accepts (Playwright's emulateMedia).
var MediaFeatures = map[string][]string{
	"prefers-color-scheme":   {"light", "dark"},
	"prefers-reduced-motion": {"reduce", "no-preference"},
	"forced-colors":          {"active", "none"},
	"prefers-contrast":       {"more", "no-preference"},
}

// MediaTypes are the media types EmulateMedia takes.
var MediaTypes = []string{"screen", "print"}

// MediaKey names the media type in an EmulateMedia change.
const MediaKey = "media"

// EmulateMedia changes the page's media overrides: each key of change (a
// feature of MediaFeatures, or MediaKey) is set to its value, or cleared
// when its value is empty; keys not named keep their value. It returns the
// overrides in force after.
func (p *Page) EmulateMedia(ctx context.Context, change map[string]string) (*ActionResult, error) {
	for _, k := range slices.Sorted(maps.Keys(change)) {
		v := change[k]
		allowed, ok := MediaFeatures[k]
		if k == MediaKey {
			allowed, ok = MediaTypes, true
		}
		if !ok {
			return nil, fsm.Refusef(fsm.InvalidArgument, "%q is not a media feature webcodex emulates", capString(k, 40))
		}
		if v != "" && !slices.Contains(allowed, v) {
			return nil, fsm.Refusef(fsm.InvalidArgument, "%s is one of %v, or null to clear it", k, allowed)
		}
	}
	release, err := p.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	p.mu.Lock()
	next := mediaState{media: p.media.media, features: maps.Clone(p.media.features)}
	p.mu.Unlock()
	if next.features == nil {
		next.features = map[string]string{}
	}
	for k, v := range change {
		switch {
		case k == MediaKey:
			next.media = v
		case v == "":
			delete(next.features, k)
		default:
			next.features[k] = v
		}
	}
	// Every feature is sent, the cleared ones empty: the command replaces
	// the features it names, and an empty value lifts an override.
	params := emulation.SetEmulatedMediaParams{Media: next.media}
	for _, name := range slices.Sorted(maps.Keys(MediaFeatures)) {
		params.Features = append(params.Features, &emulation.MediaFeature{Name: name, Value: next.features[name]})
	}
	if _, err := cdproto.Call(ctx, p.sess, emulation.SetEmulatedMedia, params); err != nil {
		return nil, p.readErr(ctx, err)
	}
	p.mu.Lock()
	p.media = next
	p.mu.Unlock()
	now := maps.Clone(next.features)
	if next.media != "" {
		now[MediaKey] = next.media
	}
	return &ActionResult{Action: "emulate_media", Media: now}, nil
}
