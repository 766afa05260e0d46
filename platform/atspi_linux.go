package platform

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/godbus/dbus/v5"
)

// AT-SPI over plain D-Bus calls (no libatspi, no cgo): the session bus's
// org.a11y.Bus names the accessibility bus; on it the registry lists one
// application per toolkit connection, and each accessible object answers
// org.a11y.atspi.Accessible, Action and friends. Measured against Chromium
// 156's "Allow remote debugging?" prompt.
const (
	a11yBusName     = "org.a11y.Bus"
	a11yBusPath     = "/org/a11y/bus"
	a11yRegistry    = "org.a11y.atspi.Registry"
	a11yRootPath    = "/org/a11y/atspi/accessible/root"
	a11yNullPath    = "/org/a11y/atspi/null"
	ifAccessible    = "org.a11y.atspi.Accessible"
	ifAction        = "org.a11y.atspi.Action"
	dbusGetPID      = "org.freedesktop.DBus.GetConnectionUnixProcessID"
	a11yGetAddress  = "org.a11y.Bus.GetAddress"
	a11yCallTimeout = 2 * time.Second // one call; a browser whose UI thread is busy answers late
)

// AT-SPI roles (GetRole) the consent adapter reads.
const (
	roleAlert      = 2
	roleDialog     = 16
	roleFrame      = 23
	rolePushButton = 43
)

// AT-SPI state bits (GetState: two 32-bit words).
const (
	stateEnabled   = 8
	stateSensitive = 24
	stateShowing   = 25
	stateVisible   = 30
)

// a11yRef is an AT-SPI object reference: the owning connection's unique bus
// name and the object's path, D-Bus type (so).
type a11yRef struct {
	Bus  string
	Path dbus.ObjectPath
}

func (r a11yRef) null() bool { return r.Path == a11yNullPath || r.Path == "" }

// a11yBus is a connection to the accessibility bus.
type a11yBus struct {
	conn *dbus.Conn
	stop context.CancelFunc // ends the connection's lifetime
}

// dialA11y asks the session bus at sessionAddr for the accessibility bus's
// address (activating at-spi-bus-launcher when needed) and connects there.
func dialA11y(ctx context.Context, sessionAddr string) (*a11yBus, error) {
	sess, err := dbus.Connect(sessionAddr, dbus.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("session bus: %w", err)
	}
	defer sess.Close()
	var addr string
	if err := sess.Object(a11yBusName, a11yBusPath).CallWithContext(ctx, a11yGetAddress, 0).Store(&addr); err != nil {
		return nil, fmt.Errorf("org.a11y.Bus.GetAddress: %w", err)
	}
	// The connection outlives ctx, which bounds only the dial: ending
	// lifetime closes it.
	lifetime, stop := context.WithCancel(context.Background())
	abandon := context.AfterFunc(ctx, stop)
	conn, err := dbus.Connect(addr, dbus.WithContext(lifetime))
	if !abandon() {
		err = errors.Join(err, ctx.Err()) // ctx ended during the dial: lifetime is over
	}
	if err != nil {
		stop()
		if conn != nil {
			conn.Close()
		}
		return nil, fmt.Errorf("accessibility bus: %w", err)
	}
	return &a11yBus{conn: conn, stop: stop}, nil
}

func (b *a11yBus) close() error {
	err := b.conn.Close()
	b.stop()
	return err
}

// call makes one method call on r, bounded by ctx and a11yCallTimeout.
func (b *a11yBus) call(ctx context.Context, r a11yRef, method string, out any, args ...any) error {
	ctx, cancel := context.WithTimeout(ctx, a11yCallTimeout)
	defer cancel()
	c := b.conn.Object(r.Bus, r.Path).CallWithContext(ctx, method, 0, args...)
	if c.Err != nil {
		return c.Err
	}
	if out == nil {
		return nil
	}
	return c.Store(out)
}

func (b *a11yBus) prop(ctx context.Context, r a11yRef, iface, name string) (dbus.Variant, error) {
	var v dbus.Variant
	err := b.call(ctx, r, "org.freedesktop.DBus.Properties.Get", &v, iface, name)
	return v, err
}

func (b *a11yBus) children(ctx context.Context, r a11yRef) ([]a11yRef, error) {
	var kids []a11yRef
	err := b.call(ctx, r, ifAccessible+".GetChildren", &kids)
	return kids, err
}

func (b *a11yBus) role(ctx context.Context, r a11yRef) (uint32, error) {
	var role uint32
	err := b.call(ctx, r, ifAccessible+".GetRole", &role)
	return role, err
}

func (b *a11yBus) name(ctx context.Context, r a11yRef) (string, error) {
	v, err := b.prop(ctx, r, ifAccessible, "Name")
	if err != nil {
		return "", err
	}
	s, _ := v.Value().(string)
	return s, nil
}

func (b *a11yBus) parent(ctx context.Context, r a11yRef) (a11yRef, error) {
	v, err := b.prop(ctx, r, ifAccessible, "Parent")
	if err != nil {
		return a11yRef{}, err
	}
	var p a11yRef
	err = dbus.Store([]any{v.Value()}, &p)
	return p, err
}

func (b *a11yBus) attributes(ctx context.Context, r a11yRef) (map[string]string, error) {
	var m map[string]string
	err := b.call(ctx, r, ifAccessible+".GetAttributes", &m)
	return m, err
}

func (b *a11yBus) states(ctx context.Context, r a11yRef) (uint64, error) {
	var st []uint32
	if err := b.call(ctx, r, ifAccessible+".GetState", &st); err != nil {
		return 0, err
	}
	if len(st) != 2 {
		return 0, fmt.Errorf("GetState: %d words", len(st))
	}
	return uint64(st[0]) | uint64(st[1])<<32, nil
}

// actionName returns the name of action i. GetActions is no use: Chromium
// 156 returns empty names there.
func (b *a11yBus) actionName(ctx context.Context, r a11yRef, i int32) (string, error) {
	var s string
	err := b.call(ctx, r, ifAction+".GetName", &s, i)
	return s, err
}

func (b *a11yBus) doAction(ctx context.Context, r a11yRef, i int32) (bool, error) {
	var ok bool
	err := b.call(ctx, r, ifAction+".DoAction", &ok, i)
	return ok, err
}

// matchRule is an AT-SPI Collection match rule, D-Bus type (aiia{ss}iaiiasib).
type matchRule struct {
	States     []int32
	StateMatch int32
	Attributes map[string]string
	AttrMatch  int32
	Roles      []int32
	RoleMatch  int32
	Interfaces []string
	IfaceMatch int32
	Invert     bool
}

// descendantsWithRole returns r's descendants of role, in one call
// (Collection.GetMatches) instead of a walk of dozens. The role must be
// matched with ANY: at-spi2's ALL compares toolkit role numbers with AT-SPI
// ones and matches nothing; the other match types must be ALL with empty
// sets (INVALID matches nothing).
func (b *a11yBus) descendantsWithRole(ctx context.Context, r a11yRef, role uint32) ([]a11yRef, error) {
	const matchAll, matchAny, sortCanonical = 1, 2, 1
	roles := make([]int32, 4)
	roles[role/32] = int32(uint32(1) << (role % 32))
	rule := matchRule{States: []int32{0, 0}, StateMatch: matchAll, Attributes: map[string]string{}, AttrMatch: matchAll,
		Roles: roles, RoleMatch: matchAny, Interfaces: []string{}, IfaceMatch: matchAll}
	var out []a11yRef
	err := b.call(ctx, r, "org.a11y.atspi.Collection.GetMatches", &out, rule, uint32(sortCanonical), int32(0), true)
	return out, err
}

// pidOf is the PID the accessibility bus daemon recorded for a connection
// when it was made (SO_PEERCRED): a program cannot claim another's.
func (b *a11yBus) pidOf(ctx context.Context, bus string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, a11yCallTimeout)
	defer cancel()
	var pid uint32
	if err := b.conn.BusObject().CallWithContext(ctx, dbusGetPID, 0, bus).Store(&pid); err != nil {
		return 0, err
	}
	if pid == 0 {
		return 0, errors.New("no PID for the connection")
	}
	return int(pid), nil
}

// applications lists the registry's applications (one root per connection).
func (b *a11yBus) applications(ctx context.Context) ([]a11yRef, error) {
	return b.children(ctx, a11yRef{Bus: a11yRegistry, Path: a11yRootPath})
}
