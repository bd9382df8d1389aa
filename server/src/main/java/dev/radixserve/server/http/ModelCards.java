package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.api.ApiException;
import java.util.UUID;

/**
 * {@code GET /v1/models} and {@code GET /v1/models/{model}}: OpenAI's model object in vLLM's
 * {@code ModelCard} shape, which clients of vLLM read for the context length:
 *
 * <pre>
 *   {"id", "object": "model", "created", "owned_by": "radixserve", "root": model directory,
 *    "parent": null, "weights_digest", "max_model_len",
 *    "permission": [{"object": "model_permission", ...}]}
 * </pre>
 *
 * {@code id} is the served model name; {@code root} where the weights came from (the model
 * directory as given, or the served name for the embedded model), as vLLM reports its
 * {@code --model} path there. {@code weights_digest} (radixserve's own) tells which weights
 * those are ({@code WeightsDigest}): the same name and directory may hold new weights.
 */
final class ModelCards {

  static final String PREFIX = "/v1/models/";

  private final String id;
  private final String root;
  private final String weightsDigest;
  private final int maxModelLen;
  private final long created;
  private final String permissionId = "modelperm-" + UUID.randomUUID().toString().replace("-", "");

  ModelCards(String id, String root, String weightsDigest, int maxModelLen, long created) {
    this.id = id;
    this.root = root;
    this.weightsDigest = weightsDigest;
    this.maxModelLen = maxModelLen;
    this.created = created;
  }

  ObjectNode list() {
    ObjectNode root = Responses.JSON.createObjectNode();
    root.put("object", "list");
    root.putArray("data").add(card());
    return root;
  }

  /** The card of {@code model}; 404 in OpenAI's shape when it is not the served one. */
  ObjectNode card(String model) {
    if (!model.equals(id)) {
      throw new ApiException(404, "invalid_request_error", "model", "model_not_found",
          "The model `" + model + "` does not exist.");
    }
    return card();
  }

  private ObjectNode card() {
    ObjectNode m = Responses.JSON.createObjectNode();
    m.put("id", id);
    m.put("object", "model");
    m.put("created", created);
    m.put("owned_by", "radixserve");
    m.put("root", root);
    m.putNull("parent");
    m.put("weights_digest", weightsDigest);
    m.put("max_model_len", maxModelLen);
    ObjectNode p = m.putArray("permission").addObject();
    p.put("id", permissionId);
    p.put("object", "model_permission");
    p.put("created", created);
    p.put("allow_create_engine", false);
    p.put("allow_sampling", true);
    p.put("allow_logprobs", true);
    p.put("allow_search_indices", false);
    p.put("allow_view", true);
    p.put("allow_fine_tuning", false);
    p.put("organization", "*");
    p.putNull("group");
    p.put("is_blocking", false);
    return m;
  }
}
