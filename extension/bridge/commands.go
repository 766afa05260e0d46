package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// pageCommand is one CDP command a shared tab's page session may send
// through the bridge: what the page surface needs and nothing more. Params
// lists the parameters it may carry; a name ending in "=false" may only be
// false (its true is the danger), as in the raw CDP table (cdp/policy).
type pageCommand struct {
	Method string
	Params []string
	Why    string
}

const (
	whyEnable  = "turns on the page events the surface's fences and diagnostics read"
	whyWorld   = "the surface's own isolated world in the page's documents: snapshots, locating and reading run there"
	whyObjects = "objects the surface's world returned"
	whyInput   = "input as the person at the keyboard and mouse; the input verbs hit-test it against denied frames first"
	whyRender  = "screenshots of the page, with denied frames masked by the screenshot verb"
	whyFrames  = "the page's frame tree, which the surface judges frame by frame against the origin gate"
)

// pageCommands is the bridge's command table, checked for every command
// the Runner sends to a shared tab. It is narrower than raw CDP's open
// table (cdp/policy): no Browser, Target, Storage, Fetch or Network control
// command, no history, no cookies, no downloads, no script planted for
// later documents. Page.navigate carries only a URL, which the origin gate
// judged before the surface sent it.
var pageCommands = []pageCommand{
	{"Page.enable", nil, whyEnable},
	{"Page.setLifecycleEventsEnabled", []string{"enabled"}, whyEnable},
	{"Runtime.enable", nil, whyEnable},
	{"Network.enable", []string{"maxTotalBufferSize", "maxResourceBufferSize", "maxPostDataSize"}, whyEnable},
	{"Log.enable", nil, whyEnable},
	{"Page.getFrameTree", nil, whyFrames},
	{"DOM.getFrameOwner", []string{"frameId"}, whyFrames},
	{"Page.createIsolatedWorld", []string{"frameId", "worldName", "grantUniveralAccess=false"}, whyWorld},
	{"Runtime.evaluate", []string{"expression", "objectGroup", "includeCommandLineAPI=false", "silent", "contextId", "returnByValue",
		"generatePreview=false", "userGesture", "awaitPromise", "throwOnSideEffect", "timeout", "disableBreaks", "replMode=false",
		"allowUnsafeEvalBlockedByCSP", "uniqueContextId", "serializationOptions"}, whyWorld},
	{"Runtime.callFunctionOn", []string{"functionDeclaration", "objectId", "arguments", "silent", "returnByValue", "generatePreview=false",
		"userGesture", "awaitPromise", "executionContextId", "objectGroup", "throwOnSideEffect", "uniqueContextId", "serializationOptions"}, whyWorld},
	{"Runtime.getProperties", []string{"objectId", "ownProperties", "accessorPropertiesOnly", "generatePreview=false", "nonIndexedPropertiesOnly"}, whyObjects},
	{"Runtime.releaseObject", []string{"objectId"}, whyObjects},
	{"Runtime.releaseObjectGroup", []string{"objectGroup"}, whyObjects},
	{"Runtime.terminateExecution", nil, "stops a page script that wedged the tab, so the tab answers again"},
	{"DOM.describeNode", []string{"nodeId", "backendNodeId", "objectId", "depth", "pierce=false"}, whyObjects},
	{"DOM.resolveNode", []string{"nodeId", "backendNodeId", "objectGroup", "executionContextId"}, whyObjects},
	{"DOM.setFileInputFiles", []string{"files", "nodeId", "backendNodeId", "objectId"}, "the upload verb: files from the owner-named directory only"},
	{"Input.dispatchMouseEvent", []string{"type", "x", "y", "modifiers", "timestamp", "button", "buttons", "clickCount", "force",
		"tangentialPressure", "tiltX", "tiltY", "twist", "deltaX", "deltaY", "pointerType"}, whyInput},
	{"Input.dispatchKeyEvent", []string{"type", "modifiers", "timestamp", "text", "unmodifiedText", "keyIdentifier", "code", "key",
		"windowsVirtualKeyCode", "nativeVirtualKeyCode", "autoRepeat", "isKeypad", "isSystemKey", "location", "commands"}, whyInput},
	{"Input.insertText", []string{"text"}, whyInput},
	{"Page.getLayoutMetrics", nil, whyRender},
	{"Page.captureScreenshot", []string{"format", "quality", "clip", "fromSurface", "captureBeyondViewport", "optimizeForSpeed"}, whyRender},
	{"Emulation.setDeviceMetricsOverride", []string{"width", "height", "deviceScaleFactor", "mobile", "scale", "screenWidth", "screenHeight",
		"positionX", "positionY", "dontSetVisibleSize", "screenOrientation", "viewport", "displayFeature", "devicePosture"}, whyRender},
	{"Emulation.clearDeviceMetricsOverride", nil, whyRender},
	{"Page.handleJavaScriptDialog", []string{"accept", "promptText"}, "the dialog verb answers a dialog of the page as the person would"},
	{"Page.navigate", []string{"url"}, "the navigate verb, after the origin gate judged the destination"},
	{"Runtime.runIfWaitingForDebugger", nil, "resumes a target paused on start (none is: child targets are not attached through the bridge)"},
}

var pageCommandIndex = func() map[string]*pageCommand {
	m := map[string]*pageCommand{}
	for i := range pageCommands {
		c := &pageCommands[i]
		if _, dup := m[c.Method]; dup {
			panic("bridge: command listed twice: " + c.Method)
		}
		m[c.Method] = c
	}
	return m
}()

// Command is one row of the bridge's command table, for spec/.
type Command struct {
	Method string
	Params []string // "name=false": only false passes
	Why    string
}

// CommandTable returns the bridge's command table, sorted by method.
func CommandTable() []Command {
	out := make([]Command, 0, len(pageCommands))
	for _, c := range pageCommands {
		out = append(out, Command{Method: c.Method, Params: append([]string(nil), c.Params...), Why: c.Why})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Method < out[j].Method })
	return out
}

// PageCommands returns the methods of the bridge's command table, sorted.
func PageCommands() []string {
	out := make([]string, 0, len(pageCommands))
	for _, c := range pageCommands {
		out = append(out, c.Method)
	}
	sort.Strings(out)
	return out
}

// checkCommand returns nil when method with params may go to a shared
// tab, and otherwise says why not (a CDP error message).
func checkCommand(method string, params json.RawMessage) error {
	c := pageCommandIndex[method]
	if c == nil {
		return fmt.Errorf("%.100s is not available through the extension bridge", method)
	}
	params = bytes.TrimSpace(params)
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(params, &members); err != nil {
		return fmt.Errorf("%s: params must be an object", method)
	}
	for name, v := range members {
		i := slices.IndexFunc(c.Params, func(p string) bool { return strings.TrimSuffix(p, "=false") == name })
		if i < 0 {
			return fmt.Errorf("%s: parameter %.60q is not available through the extension bridge", method, name)
		}
		if strings.HasSuffix(c.Params[i], "=false") && string(bytes.TrimSpace(v)) != "false" {
			return fmt.Errorf("%s: parameter %s may only be false through the extension bridge", method, name)
		}
	}
	return nil
}
