package compat

import (
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"zest/tests/compat/harness"
)

// PublishMessage: the instance waits in a receive task; a message with its correlation key
// completes it with the message's variables. A message id is unique while the message is
// buffered; a message with another correlation key does not correlate.
func TestPublishMessageCompletesReceiveTask(t *testing.T) {
	id, _ := deployModel(t, "receive_message.bpmn", "zest_proc")
	ch := createWithResultAsync(t, id, map[string]any{"orderId": id}, 20*time.Second)

	publish := func(key, messageID string, ttl time.Duration, vars map[string]any) (int64, error) {
		cmd, err := cli.NewPublishMessageCommand().MessageName(id + "-paid").CorrelationKey(key).
			TimeToLive(ttl).MessageId(messageID).VariablesFromMap(vars)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cmd.Send(harness.Ctx(t, 10*time.Second))
		if err != nil {
			return 0, err
		}
		return resp.Key, nil
	}
	// another correlation key: nothing happens
	if _, err := publish("someone-else", "", 0, map[string]any{"wrong": true}); err != nil {
		t.Fatalf("publish: %s", harness.Describe(err))
	}
	// buffered for 10 s, so it correlates even if the subscription opens after it
	key, err := publish(id, "m-"+id, 10*time.Second, map[string]any{"amount": 42})
	if err != nil {
		t.Fatalf("publish: %s", harness.Describe(err))
	}
	if key <= 0 {
		t.Errorf("message key %d", key)
	}
	v := decodeVars(t, awaitResult(t, ch, 15*time.Second).Variables)
	if v["amount"] != 42.0 || v["orderId"] != id || v["wrong"] != nil {
		t.Errorf("result variables %v", v)
	}
	_, err = publish(id, "m-"+id, 10*time.Second, nil)
	wantCode(t, "publish a message id that is still buffered", err, codes.AlreadyExists)
}
