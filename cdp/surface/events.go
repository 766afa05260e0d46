package surface

import (
	"reflect"

	cdproto "github.com/chromedp/cdproto/cdp"
)

// Session is what a Page runs on: cdproto's commands, and the session's
// events decoded to cdproto's types in the order the browser sent them
// (*cdp.Session, and wrappers that embed it). The order matters: a console
// message is read after the creation of the execution context it names,
// never after that of a later context reusing its id.
type Session interface {
	cdproto.Session
	// Events returns one channel of the events of methods, each a cdproto
	// event type (*page.EventFrameNavigated), closed when the session ends
	// or on cancel. See [cdp.Session.Events].
	Events(methods ...string) (<-chan any, func())
}

// eventTable is a set of events and what handles each. The methods a
// subscription asks for and the dispatch of what it delivers come from the
// one list, so an event cannot be subscribed to and left unhandled, or
// handled and never subscribed to.
type eventTable[T any] struct {
	methods []string
	byType  map[reflect.Type]func(T, any)
}

// eventHandler is one entry of an eventTable: see on.
type eventHandler[T any] struct {
	method string
	typ    reflect.Type
	handle func(T, any)
}

// on declares that events e are handled by fn.
func on[T, E any](e cdproto.Event[E], fn func(T, *E)) eventHandler[T] {
	return eventHandler[T]{
		method: e.Method,
		typ:    reflect.TypeFor[*E](),
		handle: func(to T, ev any) { fn(to, ev.(*E)) },
	}
}

func newEventTable[T any](handlers ...eventHandler[T]) eventTable[T] {
	t := eventTable[T]{byType: make(map[reflect.Type]func(T, any), len(handlers))}
	for _, h := range handlers {
		if _, dup := t.byType[h.typ]; dup {
			panic("surface: two handlers for " + h.method)
		}
		t.methods = append(t.methods, h.method)
		t.byType[h.typ] = h.handle
	}
	return t
}

// subscribe asks s for the table's events.
func (t eventTable[T]) subscribe(s Session) (<-chan any, func()) {
	return s.Events(t.methods...)
}

// dispatch hands ev to its handler, by its type; it reports false for an
// event the table does not list.
func (t eventTable[T]) dispatch(to T, ev any) bool {
	h, ok := t.byType[reflect.TypeOf(ev)]
	if ok {
		h(to, ev)
	}
	return ok
}
