package adapter

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/agentree/agentree/entrystore"
)

// fenceHeader carries a local activity's write fence: the Temporal time
// (workflow.Now) of the workflow task that scheduled it.
const fenceHeader = "agentree-write-fence"

// fenceInterceptor gives every local activity the time of the workflow
// task that scheduled it as its store writes' fence
// (entrystore.WithWriteFence): a task the server timed out while its
// worker ran on cannot branch the conversation where a newer task of the
// same execution went on. Activities are scheduled by the server, which
// runs one attempt at a time, so they carry none.
type fenceInterceptor struct {
	interceptor.WorkerInterceptorBase
}

func (*fenceInterceptor) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &fenceWorkflowInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
}

func (*fenceInterceptor) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &fenceActivityInbound{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}}
}

type fenceWorkflowInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (w *fenceWorkflowInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return w.Next.Init(&fenceWorkflowOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}})
}

type fenceWorkflowOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
}

// ExecuteLocalActivity writes the fence into the local activity's header
// (a map of its own: the SDK makes one per call).
func (o *fenceWorkflowOutbound) ExecuteLocalActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	if h := interceptor.WorkflowHeader(ctx); h != nil {
		if p, err := converter.GetDefaultDataConverter().ToPayload(workflow.Now(ctx).UnixNano()); err == nil {
			h[fenceHeader] = p
		}
	}
	return o.Next.ExecuteLocalActivity(ctx, activityType, args...)
}

type fenceActivityInbound struct {
	interceptor.ActivityInboundInterceptorBase
}

// ExecuteActivity puts a local activity's fence on its context.
func (a *fenceActivityInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if at, ok := fenceOf(ctx); ok {
		ctx = entrystore.WithWriteFence(ctx, at)
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// fenceOf is a local activity's fence, from its header.
func fenceOf(ctx context.Context) (time.Time, bool) {
	if !activity.IsActivity(ctx) || !activity.GetInfo(ctx).IsLocalActivity {
		return time.Time{}, false
	}
	p := interceptor.Header(ctx)[fenceHeader]
	var nanos int64
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &nanos) != nil || nanos <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, nanos).UTC(), true
}
