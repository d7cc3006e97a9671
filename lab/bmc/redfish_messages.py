"""Redfish error replies of the lab's BMCs: the DMTF ``redfish-error.v1_0_2`` envelope with messages of the DMTF
Base.1.16.0 registry.

Shape (http://redfish.dmtf.org/schemas/v1/redfish-error.v1_0_2.json): ``{"error": {"code": MessageId, "message": text,
"@Message.ExtendedInfo": [Message]}}``; each Message (Message.v1_1_1) has MessageId, Message, MessageArgs,
MessageSeverity and Resolution. Texts are verbatim from https://redfish.dmtf.org/registries/Base.1.16.0.json.
"""

REGISTRY = "Base.1.16.0"
# name -> (message, severity, resolution), verbatim from the DMTF Base.1.16.0 message registry.
MESSAGES = {
    "ActionParameterMissing": ("The action %1 requires the parameter %2 to be present in the request body.", "Critical",
                               "Supply the action with the required parameter in the request body when the request is resubmitted."),
    "ActionParameterValueNotInList": (
        "The value '%1' for the parameter %2 in the action %3 is not in the list of acceptable values.", "Warning",
        "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed."),
    "EmptyJSON": ("The request body submitted contained an empty JSON object and the service is unable to process it.", "Warning",
                  "Add properties in the JSON object and resubmit the request."),
    "InternalError": ("The request failed due to an internal service error.  The service is still operational.", "Critical",
                      "Resubmit the request.  If the problem persists, consider resetting the service."),
    "InvalidURI": ("The URI %1 was not found.", "Critical", "Provide a valid URI and resubmit the request."),
    "MalformedJSON": ("The request body submitted was malformed JSON and could not be parsed by the receiving service.", "Critical",
                      "Ensure that the request body is valid JSON and resubmit the request."),
    "NoValidSession": ("There is no valid session established with the implementation.", "Critical",
                       "Establish a session before attempting any operations."),
    "OperationNotAllowed": ("The HTTP method is not allowed on this resource.", "Critical", "None."),
    "PreconditionFailed": ("The ETag supplied did not match the ETag required to change this resource.", "Critical",
                           "Try the operation again using the appropriate ETag."),
    "PropertyMissing": ("The property %1 is a required property and must be included in the request.", "Warning",
                        "Ensure that the property is in the request body and has a valid value and resubmit the request if the operation failed."),
    "PropertyNotWritable": ("The property %1 is a read only property and cannot be assigned a value.", "Warning",
                            "Remove the property from the request body and resubmit the request if the operation failed."),
    "PropertyUnknown": ("The property %1 is not in the list of valid properties for the resource.", "Warning",
                        "Remove the unknown property from the request body and resubmit the request if the operation failed."),
    "PropertyValueNotInList": (
        "The value '%1' for the property %2 is not in the list of acceptable values.", "Warning",
        "Choose a value from the enumeration list that the implementation can support and resubmit the request if the operation failed."),
    "PropertyValueTypeError": ("The value '%1' for the property %2 is of a different type than the property can accept.", "Warning",
                               "Correct the value for the property in the request body and resubmit the request if the operation failed."),
    # these two as DMTF's Base registry words them (Base.1.12 and later; the resolution as in Base 1.8)
    "QueryNotSupported": ("Querying is not supported by the implementation.", "Warning",
                          "Remove the query parameters and resubmit the request if the operation failed."),
    "QueryNotSupportedOnResource": ("Querying is not supported on the requested resource.", "Warning",
                                    "Remove the query parameters and resubmit the request if the operation failed."),
    "QueryParameterValueTypeError": ("The value '%1' for the query parameter %2 is of a different type than the parameter can accept.",
                                     "Warning", "Correct the value for the query parameter in the request and resubmit the request if the operation failed."),
    "ResourceAtUriUnauthorized": ("While accessing the resource at '%1', the service received an authorization error '%2'.", "Critical",
                                  "Ensure that the appropriate access is provided for the service in order for it to access the URI."),
    "ResourceInUse": ("The change to the requested resource failed because the resource is in use or in transition.", "Warning",
                      "Remove the condition and resubmit the request if the operation failed."),
}


class Reply:
    """An answer: ``body`` is a JSON value, or bytes sent as they are with ``content_type``."""

    def __init__(self, status, body=None, headers=None, content_type=None):
        self.status, self.body, self.headers = status, body, dict(headers or {})
        self.content_type = content_type


def message(name, *args):
    text, severity, resolution = MESSAGES[name]
    for i, arg in reversed(list(enumerate(args, 1))):
        text = text.replace("%" + str(i), str(arg))
    return {"@odata.type": "#Message.v1_1_1.Message", "MessageId": f"{REGISTRY}.{name}", "Message": text,
            "MessageArgs": [str(arg) for arg in args], "MessageSeverity": severity, "Resolution": resolution}


def error(status, name, *args, headers=None):
    msg = message(name, *args)
    return Reply(status, {"error": {"code": msg["MessageId"], "message": msg["Message"], "@Message.ExtendedInfo": [msg]}}, headers)
